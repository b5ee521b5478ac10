"""How often each RDAP and WHOIS server may be asked: a dated table per server, a fallback per
protocol, and the operator's PROVIDER_RATE_LIMITS on top.

The bundled table is `data/server_rate_limits.csv`:

    protocol,server,limit,period,as_of,note
    whois,whois.nic.uk,5,1s,2026-12-05,Nominet's WHOIS acceptable use policy: ...
    rdap,*,2,1s,2026-12-05,any other RDAP server: no common figure; conservative

A server may have several rows (Nominet: 5 a second and 1,000 a day); each is a window that
must hold. `*` is every server of that protocol the table does not name. `period` is `s`,
`min` or `h`, optionally after a whole number (`60s`, `24h`).

PROVIDER_RATE_LIMITS is `host=N/period` entries, comma-separated (`rdap.verisign.com=10/s,
whois.nic.uk=1/s`, `*=1/s` for every server not named): a host named there loses the table's
rows for it. A host without a port matches it on any port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dominus.host_names import parse_host
from dominus.providers.csvfiles import parse_date, read_rows
from dominus.providers.errors import ProviderDataError

BUNDLED_RATE_LIMITS_PATH = Path(__file__).parent / "data" / "server_rate_limits.csv"
PROTOCOLS = ("rdap", "whois")
ANY_SERVER = "*"
_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
_PERIOD = re.compile(r"^(\d*)(s|min|h)$")
_RATE = re.compile(r"^(-?\d+)/(.+)$")
RATE_FORMS = "N/s, N/min, N/h or N/<whole number><s|min|h> (e.g. 10/s, 30/min, 1000/24h)"


@dataclass(frozen=True)
class Window:
    """At most `limit` sends in any `period_seconds` (a sliding window)."""

    limit: int
    period_seconds: float

    def __str__(self) -> str:
        return f"{self.limit}/{self.period_seconds:g}s"


def parse_period(text: str) -> float:
    """`s`, `min`, `h`, or one of them after a whole number (`10s`, `24h`); ValueError else."""
    found = _PERIOD.match(text.strip().lower())
    if not found:
        raise ValueError(f"period {text!r} is not s, min, h or <whole number><s|min|h>")
    count = int(found[1]) if found[1] else 1
    if count < 1:
        raise ValueError(f"period {text!r} must be at least one {found[2]}")
    return count * _UNITS[found[2]]


def parse_rate(text: str) -> Window:
    """`N/period` (see parse_period), N a whole number from 1; ValueError naming the form."""
    found = _RATE.match(text.strip())
    if not found:
        raise ValueError(f"rate {text!r} is not {RATE_FORMS}")
    limit = int(found[1])
    if limit < 1:
        raise ValueError(f"rate {text!r}: the number of sends must be at least 1")
    try:
        period = parse_period(found[2])
    except ValueError:
        raise ValueError(f"rate {text!r} is not {RATE_FORMS}") from None
    return Window(limit, period)


def server_name(text: str) -> str:
    """A server as the table and the setting name it: `*`, or `host[:port]` in canonical form
    (lower case; an IPv6 address in brackets); ValueError for anything else."""
    text = text.strip()
    if text == ANY_SERVER:
        return ANY_SERVER
    parsed = parse_host(text)
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    return host if parsed.port is None else f"{host}:{parsed.port}"


def parse_rate_limits(text: str) -> dict[str, tuple[Window, ...]]:
    """PROVIDER_RATE_LIMITS as server → its windows; ValueError naming the bad entry."""
    limits: dict[str, tuple[Window, ...]] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        server, equals, rate = entry.partition("=")
        if not equals:
            raise ValueError(f"{entry!r} is not host=N/period (e.g. rdap.verisign.com=10/s)")
        try:
            name = server_name(server)
        except ValueError as error:
            raise ValueError(f"{entry!r}: {error}") from None
        limits[name] = (*limits.get(name, ()), parse_rate(rate))
    return limits


@dataclass(frozen=True)
class RateLimits:
    """The windows each gate key (`rdap:<server>`, `whois:<server>`) is held to."""

    # (protocol, server or "*") → windows, from the table
    table: Mapping[tuple[str, str], tuple[Window, ...]] = field(default_factory=dict)
    # server or "*" → windows, from PROVIDER_RATE_LIMITS; replace the table's for that server
    overrides: Mapping[str, tuple[Window, ...]] = field(default_factory=dict)

    @classmethod
    def none(cls) -> RateLimits:
        """No limit anywhere (a gate built on it only honours pauses)."""
        return cls()

    @classmethod
    def load(cls, setting: str = "", path: Path = BUNDLED_RATE_LIMITS_PATH) -> RateLimits:
        return cls(read_table(path), parse_rate_limits(setting))

    def windows_for(self, key: str) -> tuple[Window, ...]:
        """The windows for `key`: the setting's for its server (with its port, then without),
        else the table's, else the setting's `*`, else the table's `*` for its protocol."""
        protocol, _, server = key.partition(":")
        names = _names_of(server)
        for name in names:
            if name in self.overrides:
                return self.overrides[name]
        for name in names:
            if (protocol, name) in self.table:
                return self.table[(protocol, name)]
        if ANY_SERVER in self.overrides:
            return self.overrides[ANY_SERVER]
        return self.table.get((protocol, ANY_SERVER), ())


def _names_of(server: str) -> tuple[str, ...]:
    """`host:port` and `host` (`[::1]:4343` and `[::1]`), or the host alone."""
    host, colon, port = server.rpartition(":")
    if colon and port.isdigit() and (not host.startswith("[") or host.endswith("]")):
        return (server, host)
    return (server,)


def read_table(path: Path) -> dict[tuple[str, str], tuple[Window, ...]]:
    """The table at `path`; ProviderDataError naming the line of a bad row, or when a protocol
    has no `*` row (every server must be held to something)."""
    table: dict[tuple[str, str], tuple[Window, ...]] = {}
    for line, row in read_rows(
        path, required=("protocol", "server", "limit", "period", "as_of", "note")
    ):
        protocol = row["protocol"].strip().lower()
        if protocol not in PROTOCOLS:
            raise ProviderDataError(
                path, f"protocol {row['protocol']!r} is not rdap or whois", line
            )
        parse_date(path, line, "as_of", row["as_of"])  # every figure says when it was read
        try:
            server = server_name(row["server"])
            window = parse_rate(f"{row['limit']}/{row['period']}")
        except ValueError as error:
            raise ProviderDataError(path, str(error), line) from None
        table[(protocol, server)] = (*table.get((protocol, server), ()), window)
    missing = [name for name in PROTOCOLS if (name, ANY_SERVER) not in table]
    if missing:
        raise ProviderDataError(path, f"no '*' row for {' and '.join(missing)}")
    return table


def describe(limits: Iterable[Window]) -> str:
    return " and ".join(str(window) for window in limits) or "no limit"
