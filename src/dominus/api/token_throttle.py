"""Slowing down token guessing, per client address: the API's bearer token and the dashboard's
login form share one count.

- The first FREE_FAILURES wrong tokens from an address are answered as usual (401). From then
  on the address must wait after each wrong token: 1 s after the fifth, then 2, 4, 8 … up to
  60 s. A request from it while it waits is refused at once (429 with Retry-After) without its
  token being looked at, so waiting is the only way to go on guessing. Failures further apart
  than WINDOW_SECONDS start the count again; the right token clears it.
- Each wrong token is logged at WARNING with the client address (never the token).
- Only a try that could have matched counts (`Bearer <token>`, a token typed into the form): a
  request without a token, or with another scheme, is refused (401) but neither counted nor
  logged, so a monitor that lost its token does not fill the log or lock its address out.
- IPv6 clients are counted per /64, the block a single host is usually given: otherwise one
  host could guess from as many addresses as it likes.
- Memory is bounded: at most MAX_TRACKED addresses; past that the one that failed longest ago
  is forgotten.

The count lives in this process's memory. Several processes serving the same token each count
on their own (a guesser gets that many more tries), and a restart forgets them. The address
is the one uvicorn reports: it takes X-Forwarded-For from a proxy at 127.0.0.1 or ::1 (its
default); behind a proxy it does not trust, every client of the proxy shares one count (ADR
0039).
"""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import Scope

log = logging.getLogger("dominus.api")

FREE_FAILURES = 5
FIRST_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 60.0
WINDOW_SECONDS = 15 * 60.0
MAX_TRACKED = 10_000
UNKNOWN_CLIENT = "unknown"


@dataclass
class _Failures:
    count: int
    last_at: float
    wait_until: float


class TokenThrottle:
    """The wrong-token count per client address (see the module's docstring). Thread-safe:
    the login form's route and the API's middleware may call it from different threads."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        free_failures: int = FREE_FAILURES,
        max_tracked: int = MAX_TRACKED,
    ) -> None:
        self.clock = clock
        self.free_failures = free_failures
        self.max_tracked = max_tracked
        self._failures: OrderedDict[str, _Failures] = OrderedDict()  # least recent first
        self._lock = threading.Lock()

    def retry_after(self, address: str) -> int | None:
        """Whole seconds `address` must still wait before its next try, or None if it may."""
        with self._lock:
            failures = self._failures.get(_counted_as(address))
            if failures is None:
                return None
            left = failures.wait_until - self.clock()
        return math.ceil(left) if left > 0 else None

    def failed(self, address: str, where: str) -> None:
        """Count a wrong token from `address` (logged with `where` it was tried)."""
        key = _counted_as(address)
        now = self.clock()
        with self._lock:
            failures = self._failures.pop(key, None)
            if failures is None or now - failures.last_at > WINDOW_SECONDS:
                failures = _Failures(0, now, now)
            failures.count += 1
            failures.last_at = now
            delay = _delay(failures.count, self.free_failures)
            failures.wait_until = now + delay
            self._failures[key] = failures  # now the most recent
            while len(self._failures) > self.max_tracked:
                self._failures.popitem(last=False)
        wait = f"; its next try must wait {delay:g} s" if delay else ""
        log.warning(
            "wrong API token from %s on %r (%d in a row)%s", address, where, failures.count, wait
        )

    def succeeded(self, address: str) -> None:
        """The right token from `address`: its count starts again."""
        with self._lock:
            self._failures.pop(_counted_as(address), None)

    @property
    def tracked(self) -> int:
        with self._lock:
            return len(self._failures)


def client_address(scope: Scope) -> str:
    """The client's address as the server saw it (after uvicorn's X-Forwarded-For handling)."""
    client = scope.get("client")
    return str(client[0]) if client else UNKNOWN_CLIENT


def _delay(count: int, free_failures: int) -> float:
    """The wait after the `count`-th failure in a row: none before the limit, then doubling."""
    if count < free_failures:
        return 0.0
    doublings = min(count - free_failures, 16)  # 2**16 s is past the cap already
    return min(FIRST_DELAY_SECONDS * float(2**doublings), MAX_DELAY_SECONDS)


def _counted_as(address: str) -> str:
    """IPv6 addresses count per /64; anything else (IPv4, a name) as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return address
