"""The rate gate every process shares: RDAP and WHOIS servers' limits and pauses kept in the
database, through the job engine's limiters (ADR 0053), so three workers on three hosts ask a
server as often as one would.

Each window of a server (`RateLimits.windows_for`) is one limiter key: the first is the gate's
own key (`rdap:rdap.verisign.com`), any further one (Nominet's daily quota beside its rate per
second) the key with its window after an `@`. A send takes a grant of every window in turn; a
grant taken while a later window still holds the send back is spent, never returned, which can
only make the server see fewer requests, not more. A pause (a 429's Retry-After) is written on
the first key, which every send asks first.

A grant counts from when its request's answer came (`finished` moves it there, as the
in-process gate counts), so a server, which sees a request some time after its grant, never
sees more than the limit in one of its windows however the network delays one request against
the next. A request that takes longer than the period is the exception: its grant's slot may be
given again while it is still on its way.

When the database cannot be reached the gate falls back to this process's own gate: a lookup
is not failed because the shared count could not be read, and this process still keeps to the
limits on its own.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from dominus.errors import DatabaseError
from dominus.jobs import Limiters, RateLimit
from dominus.jobs.limits import Grant
from dominus.providers.models import StopSignal
from dominus.providers.rate_gate import MAX_PAUSE_SECONDS, InProcessRateGate, OnWait, server_of
from dominus.providers.rate_limits import RateLimits, Window

log = logging.getLogger(__name__)

# A waiter asks the database again at least this often, so an early `dominus keys resume` (or a
# pause another process wrote) is seen within it.
POLL_SECONDS = 1.0
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:@+-]")


def limiter_keys(key: str, windows: tuple[Window, ...]) -> list[tuple[str, Window]]:
    """The limiter key of each window of the gate's `key` (characters a limiter key may not
    hold, as an IPv6 address's brackets, become `_`)."""
    base = _UNSAFE.sub("_", key)
    named = []
    for position, window in enumerate(windows):
        suffix = "" if position == 0 else f"@{window.limit}per{window.period_seconds:g}s"
        named.append((base + suffix, window))
    return named or [(base, Window(0, 0.0))]


class SharedRateGate:
    """A `RateGate` over the database's limiters, falling back to `local` when the database
    fails."""

    def __init__(
        self,
        limiters: Limiters,
        limits: RateLimits,
        local: InProcessRateGate,
        *,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._limiters = limiters
        self._limits = limits
        self._local = local
        self._wall = wall
        self._configured: set[str] = set()
        self._lock = threading.Lock()
        # The grants of the requests on their way, per gate key, oldest first.
        self._in_flight: dict[str, list[list[Grant]]] = {}

    def acquire(self, key: str, stop: StopSignal | None, on_wait: OnWait | None = None) -> bool:
        try:
            keys = self._keys_of(key)
            return self._take_every(keys, key, stop, on_wait)
        except DatabaseError as error:
            log.warning("rate limits unreadable (%s); %s waits at this process's gate", error, key)
            return self._local.acquire(key, stop, on_wait)

    def finished(self, key: str) -> None:
        with self._lock:
            waiting = self._in_flight.get(key)
            grants = waiting.pop(0) if waiting else None
        if grants is None:  # let through by the local gate, the database having failed
            self._local.finished(key)
            return
        try:
            for grant in grants:
                self._limiters.answered(grant)
        except DatabaseError as error:
            log.warning("could not count the answer of %s (%s)", server_of(key), error)

    def pause(self, key: str, seconds: float, reason: str) -> None:
        seconds = min(max(seconds, 0.0), MAX_PAUSE_SECONDS)
        self._local.pause(key, seconds, reason)
        try:
            first, _ = self._keys_of(key)[0]
            self._limiters.pause(first, seconds, reason)
        except DatabaseError as error:
            log.warning("could not share the pause of %s (%s)", server_of(key), error)

    def _keys_of(self, key: str) -> list[tuple[str, Window]]:
        named = limiter_keys(key, self._limits.windows_for(key))
        with self._lock:
            fresh = [item for item in named if item[0] not in self._configured]
        for limiter_key, window in fresh:
            limit = RateLimit(window.limit, window.period_seconds) if window.limit else None
            self._limiters.configure(limiter_key, limit)
            with self._lock:
                self._configured.add(limiter_key)
        return named

    def _take_every(
        self,
        keys: list[tuple[str, Window]],
        gate_key: str,
        stop: StopSignal | None,
        on_wait: OnWait | None,
    ) -> bool:
        announced: datetime | None = None
        grants: list[Grant] = []
        try:
            for limiter_key, _ in keys:
                while True:
                    if stop is not None and stop.is_set():
                        return False
                    taken = self._limiters.try_take(limiter_key)
                    if isinstance(taken, Grant):
                        grants.append(taken)
                        break
                    wait = taken
                    until = self._wall() + timedelta(seconds=wait)
                    if on_wait is not None and (
                        announced is None or until > announced + timedelta(seconds=1)
                    ):
                        on_wait(gate_key, until)  # a new wait, or one that got longer
                        announced = until
                    nap = min(max(wait, 0.001), POLL_SECONDS)
                    if stop is None:
                        threading.Event().wait(nap)
                    elif stop.wait(nap):
                        return False
            with self._lock:
                self._in_flight.setdefault(gate_key, []).append(grants)
            return True
        finally:
            if announced is not None and on_wait is not None:
                on_wait(gate_key, None)
