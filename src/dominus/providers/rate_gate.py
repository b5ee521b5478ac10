"""Rate gates: every RDAP and WHOIS request waits at the gate of the server it asks.

A gate is keyed by server: `rdap:<host of the RDAP base URL>` and `whois:<WHOIS server>` (with
the port when it is not the protocol's default). Before each attempt a client calls
`acquire(key, stop)`, which blocks until the key may send (False: the stop signal was set
first), and `finished(key)` once the answer is in. A server that says "slow down" (HTTP 429, or
503 with Retry-After; a WHOIS rate-limit answer) is paused with `pause(key, seconds, reason)`:
every lookup to it waits, not only the one that was told.

`InProcessRateGate` keeps a sliding window per key: never more than `limit` sends in any
`period`, where a send counts from the moment it is allowed until `period` after its answer.
Counting to the answer rather than from the start is what lets the server, which sees a request
some time after it was allowed, never see more than `limit` in any of its own windows, however
the network delays one request against another. Its state is this process's only: another
process (or a restart) has its own count. `OPEN_GATE` never waits (not even after a pause), for
callers that pace themselves.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol
from urllib.parse import urlsplit

from dominus.providers.models import StopSignal
from dominus.providers.rate_limits import RateLimits, Window

log = logging.getLogger(__name__)

# The longest a server can pause DOMINUS with one answer (Retry-After, a WHOIS block): a
# larger value is taken as this, so a garbled or hostile header cannot park lookups for days.
MAX_PAUSE_SECONDS = 3600.0
_DEFAULT_PORTS = {"http": 80, "https": 443}

# (key, until) when a lookup starts waiting at the gate; (key, None) when that wait is over.
OnWait = Callable[[str, datetime | None], None]


class RateGate(Protocol):
    def acquire(self, key: str, stop: StopSignal | None, on_wait: OnWait | None = None) -> bool:
        """Block until `key` may send one request; False if `stop` was set first."""
        ...

    def finished(self, key: str) -> None:
        """The request `acquire` let through has its answer (or failed)."""
        ...

    def pause(self, key: str, seconds: float, reason: str) -> None:
        """No request to `key` for `seconds` (at most MAX_PAUSE_SECONDS) from now."""
        ...


class OpenGate:
    """Never waits."""

    def acquire(self, key: str, stop: StopSignal | None, on_wait: OnWait | None = None) -> bool:
        return stop is None or not stop.is_set()

    def finished(self, key: str) -> None:
        pass

    def pause(self, key: str, seconds: float, reason: str) -> None:
        pass


OPEN_GATE = OpenGate()


def rdap_key(base_url: str) -> str:
    """`rdap:<host>` (`:<port>` when not the scheme's default) of an RDAP base URL."""
    parts = urlsplit(base_url)
    host = (parts.hostname or base_url).lower()
    host = f"[{host}]" if ":" in host else host
    port = parts.port
    if port is None or port == _DEFAULT_PORTS.get(parts.scheme.lower()):
        return f"rdap:{host}"
    return f"rdap:{host}:{port}"


def whois_key(label: str) -> str:
    """`whois:<server>`, from a WhoisServer's label (host, and the port when it is not 43)."""
    return f"whois:{label.lower()}"


def server_of(key: str) -> str:
    """The server a key names (`rdap:rdap.verisign.com` → `rdap.verisign.com`)."""
    return key.partition(":")[2] or key


@dataclass
class _KeyState:
    windows: tuple[Window, ...]
    in_flight: int = 0
    answered: deque[float] = field(default_factory=deque)  # when each answer came, oldest first
    paused_until: float = 0.0


class InProcessRateGate:
    """Thread-safe sliding windows per key (from `limits`), and pauses, for this process."""

    def __init__(
        self,
        limits: RateLimits,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.limits = limits
        self._clock = clock
        self._sleep = sleep
        self._wall = wall
        self._lock = threading.Lock()
        self._keys: dict[str, _KeyState] = {}

    def acquire(self, key: str, stop: StopSignal | None, on_wait: OnWait | None = None) -> bool:
        announced: datetime | None = None
        try:
            while True:
                if stop is not None and stop.is_set():
                    return False
                with self._lock:
                    now = self._clock()
                    state = self._state(key)
                    ready = _ready_at(state, now)
                    if ready <= now:
                        state.in_flight += 1
                        return True
                delay = ready - now
                if on_wait is not None:
                    until = self._wall() + timedelta(seconds=delay)
                    if announced is None or until > announced + timedelta(seconds=1):
                        on_wait(key, until)  # a new wait, or one that got longer
                        announced = until
                if stop is None:
                    self._sleep(delay)
                elif stop.wait(delay):
                    return False
        finally:
            if announced is not None and on_wait is not None:
                on_wait(key, None)

    def finished(self, key: str) -> None:
        with self._lock:
            state = self._state(key)
            if state.in_flight > 0:
                state.in_flight -= 1
                state.answered.append(self._clock())

    def pause(self, key: str, seconds: float, reason: str) -> None:
        seconds = min(max(seconds, 0.0), MAX_PAUSE_SECONDS)
        with self._lock:
            state = self._state(key)
            state.paused_until = max(state.paused_until, self._clock() + seconds)
        log.warning("%s paused for %.1f s: %s", server_of(key), seconds, reason)

    def _state(self, key: str) -> _KeyState:
        state = self._keys.get(key)
        if state is None:
            state = self._keys[key] = _KeyState(self.limits.windows_for(key))
        return state


def _ready_at(state: _KeyState, now: float) -> float:
    """When `state`'s key may send next (`now` or earlier: at once). Forgets answers older than
    every window."""
    longest = max((window.period_seconds for window in state.windows), default=0.0)
    while state.answered and state.answered[0] <= now - longest:
        state.answered.popleft()
    ready = state.paused_until
    for window in state.windows:
        ready = max(ready, _window_ready_at(state, window, now))
    return ready


def _window_ready_at(state: _KeyState, window: Window, now: float) -> float:
    recent = [moment for moment in state.answered if moment > now - window.period_seconds]
    excess = state.in_flight + len(recent) - window.limit + 1  # sends that must leave the window
    if excess <= 0:
        return now
    if excess <= len(recent):
        return recent[excess - 1] + window.period_seconds
    # Requests still in flight hold the window: none leaves it before a period from now.
    return now + window.period_seconds


def pauses_only(sleep: Callable[[float], None] = time.sleep) -> InProcessRateGate:
    """A gate with no limits that still honours pauses: what a client uses when it is given
    none, so that a server's Retry-After is waited out, at least by this client."""
    return InProcessRateGate(RateLimits.none(), sleep=sleep)


def watched(gate: RateGate, on_wait: OnWait) -> RateGate:
    """`gate`, telling `on_wait` of every wait (besides any hook the caller passes)."""
    return _WatchedGate(gate, on_wait)


@dataclass(frozen=True)
class _WatchedGate:
    gate: RateGate
    on_wait: OnWait

    def acquire(self, key: str, stop: StopSignal | None, on_wait: OnWait | None = None) -> bool:
        def both(waited_key: str, until: datetime | None) -> None:
            self.on_wait(waited_key, until)
            if on_wait is not None:
                on_wait(waited_key, until)

        return self.gate.acquire(key, stop, both)

    def finished(self, key: str) -> None:
        self.gate.finished(key)

    def pause(self, key: str, seconds: float, reason: str) -> None:
        self.gate.pause(key, seconds, reason)
