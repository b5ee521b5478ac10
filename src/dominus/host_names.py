"""Host names as a `Host` header, an `Origin` and `DOMINUS_ALLOWED_HOSTS` write them: a DNS name,
an IPv4 address or a bracketed IPv6 address, each with an optional `:port`.

Parsed into one canonical form (names lower-case, addresses as `ipaddress` prints them, so
`[0:0::1]` and `[::1]` are the same host) so that comparing two hosts is comparing two strings.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

LOCALHOST = "localhost"
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")  # `_`: container host names use it
_PORT = re.compile(r":([0-9]{1,5})")
_MAX_NAME_LENGTH = 253


@dataclass(frozen=True)
class HostPort:
    """A host (canonical) and the port written after it, if any."""

    host: str
    port: int | None = None


def parse_host(text: str) -> HostPort:
    """`name[:port]`, `IPv4[:port]` or `[IPv6][:port]`; ValueError for anything else."""
    text = text.strip().lower()
    if text.startswith("["):
        address, closed, rest = text[1:].partition("]")
        if not closed:
            raise ValueError(f"{text!r}: an IPv6 address needs its closing bracket")
        return HostPort(_ip_address(address, version=6), _port(rest, text))
    name, colon, port = text.partition(":")
    return HostPort(canonical_host(name), _port(colon + port, text))


def parse_host_list(text: str) -> tuple[HostPort, ...]:
    """A comma-separated list of `parse_host` entries (empty entries are ignored)."""
    return tuple(parse_host(entry) for entry in text.split(",") if entry.strip())


def canonical_host(host: str) -> str:
    """An address as `ipaddress` prints it, or a valid DNS name in lower case (ValueError
    otherwise). IPv6 addresses come without brackets, as `--host` takes them."""
    host = host.strip().lower()
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    labels = host.split(".")
    if len(host) > _MAX_NAME_LENGTH or not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"{host!r} is not a host name or an IP address")
    return host


def is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1)."""
    if host.strip().lower() == LOCALHOST:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_unspecified(host: str) -> bool:
    """`0.0.0.0` or `::`: bound to every interface."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _ip_address(text: str, *, version: int) -> str:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an IP address") from None
    if address.version != version:
        raise ValueError(f"{text!r} is not an IPv{version} address")
    return str(address)


def _port(text: str, whole: str) -> int | None:
    if not text:
        return None
    match = _PORT.fullmatch(text)
    if match is None or not 1 <= int(match.group(1)) <= 65535:
        raise ValueError(f"{whole!r} is not `host[:port]` with a port from 1 to 65535")
    return int(match.group(1))
