"""One HTTP exchange with a server outside DOMINUS (an RDAP registry, IANA, a webhook), bounded
as a whole: it ends by its deadline, holds at most a capped answer, and ends at once on a stop.

Why httpx's own timeouts are not enough: they are per phase (connect, each read, each write)
and a read's clock starts again with every byte, so a server sending one byte a second holds a
request for as long as it likes; and `response.read()` takes a body whole, however large.

How the bounds are kept:

- Deadline: one deadline covers the whole exchange (connect, request, headers, body; with
  `fetch`, every redirect too). Every httpx timeout of the request is the time left, and a
  watchdog thread shuts the connection's socket down when the deadline passes or the stop
  signal is set; a read blocked on that socket then returns at once, and the exchange ends as
  `ExchangeTimeoutError` or `ExchangeStoppedError`. The watchdog learns the socket from
  httpcore's trace hook when the connection is opened, so each exchange asks for
  `Connection: close`: it always opens its own connection (a pooled one would be out of the
  watchdog's reach). Name resolution before connecting is the system resolver's, outside these
  bounds.
- Size: the body is streamed and counted; past `max_bytes` the exchange stops with
  `AnswerTooLargeError` (a Content-Length over the cap stops it before the body is read). With
  `max_bytes=0` the body is not read at all (a webhook needs only the status).
- Redirects: `exchange` never follows one. `fetch` follows up to MAX_REDIRECTS of them under
  one rule: a redirect on the first URL's own origin (scheme, host, port) is followed; one to
  another scheme is refused; one to another origin is followed only when every address its
  host has is a public one (not loopback, link-local, private, multicast, reserved or
  unspecified), so an answer cannot turn DOMINUS into a client of the machine's own or its
  network's services. (The name is resolved for the check and again to connect: a host whose
  DNS changes in between is not caught.) `same_origin` tells a caller whether the final answer
  came from the first URL's origin.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# How often the watchdog looks at the stop signal: a stop ends an exchange within about this.
WATCH_INTERVAL_SECONDS = 0.1
_DEFAULT_PORTS = {"http": 80, "https": 443}


class StopSignal(Protocol):
    """What an exchange watches to end early (a job's AbortSignal, a threading.Event)."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True)
class Answer:
    status: int
    headers: httpx.Headers
    body: bytes  # empty when the exchange was asked not to read it
    url: httpx.URL  # where it came from (after redirects, with `fetch`)


class ExchangeError(Exception):
    """The exchange ended without an answer the caller can use."""


class ExchangeTimeoutError(ExchangeError):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"timeout after {seconds:g} s")
        self.seconds = seconds


class ExchangeStoppedError(ExchangeError):
    def __init__(self) -> None:
        super().__init__("stopped")


class AnswerTooLargeError(ExchangeError):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"answer over {_size(max_bytes)}")


class RedirectRefusedError(ExchangeError):
    """A redirect that breaks the rule above; the target was not asked."""


def exchange(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    deadline_seconds: float,
    max_bytes: int,
    stop: StopSignal | None = None,
    headers: dict[str, str] | None = None,
    json_body: Any = None,
) -> Answer:
    """One request and its answer, redirects not followed. httpx errors other than timeouts
    (refused connections, resets, malformed answers) are raised as they are."""
    limits = _Limits(time.monotonic() + deadline_seconds, deadline_seconds, max_bytes, stop)
    return _exchange(client, method, httpx.URL(url), limits, headers or {}, json_body)


def fetch(
    client: httpx.Client,
    url: str,
    *,
    deadline_seconds: float,
    max_bytes: int,
    stop: StopSignal | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """GET `url`, following the redirects the rule allows, all within one deadline."""
    limits = _Limits(time.monotonic() + deadline_seconds, deadline_seconds, max_bytes, stop)
    first = current = httpx.URL(url)
    for _ in range(MAX_REDIRECTS + 1):
        answer = _exchange(client, "GET", current, limits, headers or {}, None)
        location = answer.headers.get("Location")
        if answer.status not in REDIRECT_STATUSES or not location:
            return answer
        try:
            target = current.join(location)
        except httpx.InvalidURL as error:
            raise RedirectRefusedError(f"redirect to an invalid URL refused: {error}") from None
        check_redirect(first, target)
        current = target
    raise RedirectRefusedError(f"more than {MAX_REDIRECTS} redirects")


def same_origin(first: httpx.URL, other: httpx.URL) -> bool:
    """Same scheme, host and port (a default port written or not)."""
    return _origin(first) == _origin(other)


def check_redirect(first: httpx.URL, target: httpx.URL) -> None:
    """RedirectRefusedError unless a redirect met in `first`'s exchange to `target` may be
    followed."""
    if target.scheme != first.scheme:
        raise RedirectRefusedError(
            f"redirect from {first.scheme} to {target.scheme or '?'} refused"
        )
    if same_origin(first, target):
        return
    host = target.host
    if not host:
        raise RedirectRefusedError("redirect to a URL without a host refused")
    try:
        addresses = _addresses(host, _origin(target)[2])
    except OSError as error:
        raise RedirectRefusedError(f"redirect to {host}: cannot resolve it ({error})") from None
    for address in addresses:
        kind = _non_public_kind(address)
        if kind is not None:
            raise RedirectRefusedError(f"redirect to {host} refused: a {kind} address ({address})")


@dataclass(frozen=True)
class _Limits:
    deadline: float  # time.monotonic() value
    seconds: float  # the whole deadline, for messages
    max_bytes: int
    stop: StopSignal | None

    def left(self) -> float:
        """Seconds left; ExchangeStoppedError or ExchangeTimeoutError when none are."""
        if self.stop is not None and self.stop.is_set():
            raise ExchangeStoppedError
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ExchangeTimeoutError(self.seconds)
        return left


def _exchange(
    client: httpx.Client,
    method: str,
    url: httpx.URL,
    limits: _Limits,
    headers: dict[str, str],
    json_body: Any,
) -> Answer:
    left = limits.left()
    with _Watchdog(limits) as watchdog:
        try:
            with client.stream(
                method,
                url,
                headers={**headers, "Connection": "close"},
                json=json_body,
                timeout=left,
                follow_redirects=False,
                extensions={"trace": watchdog.trace},
            ) as response:
                body = _read_body(response, limits)
                return Answer(response.status_code, response.headers, body, response.url)
        except httpx.TimeoutException:
            watchdog.raise_if_fired()
            raise ExchangeTimeoutError(limits.seconds) from None
        except httpx.HTTPError:
            watchdog.raise_if_fired()  # the watchdog cut the connection: say why
            raise


def _read_body(response: httpx.Response, limits: _Limits) -> bytes:
    if limits.max_bytes == 0:
        return b""  # closing the response drops whatever the server still sends
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limits.max_bytes:
        raise AnswerTooLargeError(limits.max_bytes)
    received = bytearray()
    for chunk in response.iter_bytes():
        received += chunk
        if len(received) > limits.max_bytes:
            raise AnswerTooLargeError(limits.max_bytes)
        limits.left()
    return bytes(received)


class _Watchdog:
    """Ends an exchange from outside: at the deadline, or when the stop signal is set, it shuts
    down the exchange's sockets, which wakes a read blocked on them."""

    def __init__(self, limits: _Limits) -> None:
        self._limits = limits
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._fired: ExchangeError | None = None
        self._thread = threading.Thread(target=self._watch, name="http-watchdog", daemon=True)

    def __enter__(self) -> _Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: keeps the socket of each connection opened (plain, then TLS)."""
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self._fired is not None
        if fired:
            _shut(sock)

    def raise_if_fired(self) -> None:
        with self._lock:
            fired = self._fired
        if fired is not None:
            raise fired

    def _watch(self) -> None:
        while not self._done.wait(WATCH_INTERVAL_SECONDS):
            try:
                self._limits.left()
            except ExchangeError as error:
                with self._lock:
                    self._fired = error
                    sockets = list(self._sockets)
                for sock in sockets:
                    _shut(sock)
                return


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed: nothing is blocked on it
        sock.shutdown(socket.SHUT_RDWR)


def _origin(url: httpx.URL) -> tuple[str, str, int]:
    return url.scheme, url.host.lower(), url.port or _DEFAULT_PORTS.get(url.scheme, 0)


def _addresses(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(entry[4][0]).partition("%")[0]) for entry in found]


def _non_public_kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why a redirect must not lead to `address`, or None for a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    for kind, flagged in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("unspecified", address.is_unspecified),
    ):
        if flagged:
            return kind
    return None if address.is_global else "non-public"


def _size(max_bytes: int) -> str:
    if max_bytes >= 1024 * 1024 and max_bytes % (1024 * 1024) == 0:
        return f"{max_bytes // (1024 * 1024)} MiB"
    if max_bytes >= 1024:
        return f"{max_bytes // 1024} KiB"
    return f"{max_bytes} bytes"
