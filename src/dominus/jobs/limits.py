"""`Limiters`: rate limiters and pauses shared by every process through the database (ADR 0053).

    limiters = Limiters.over(engine)
    limiters.configure("rdap:rdap.verisign.com", RateLimit.parse("10/s"))
    limiters.acquire("rdap:rdap.verisign.com", stop)      # blocks until granted (or stop)
    limiters.pause("rdap:rdap.verisign.com", 60, "429")   # everyone waits a minute

A grant for a key never makes more than its count in any window of its period, whichever
process asks (the sliding-window log of `dominus.jobs.sql.limits`). A key without a limit only
honours pauses. A handler reaches its limiters through `context.limiter(key)`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import Engine

from dominus.errors import JobAbortedError
from dominus.jobs.clock import Clock
from dominus.jobs.rate_limit import (
    MAX_PAUSE_SECONDS,
    MAX_REASON_LENGTH,
    KeyState,
    RateLimit,
    RateLimited,
    check_key,
    microseconds,
)
from dominus.jobs.sql.backend import backend_for
from dominus.jobs.sql.limits import Denial, RateLimitStore

# A waiter looks again at least this often, so a pause resumed early (or a limit raised) is
# seen within about this long.
POLL_SECONDS = 1.0
# A grant refused while the read just after shows a free slot lost a race: tried again at once
# this many times before waiting.
RACE_RETRIES = 3

__all__ = ["KeyLimiter", "Limiters", "StopSignal"]


class StopSignal(Protocol):
    """What stops a wait: a job's AbortSignal, a `threading.Event`, or alike."""

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


@dataclass(frozen=True)
class Grant:
    """One grant of `key`: the slot it took and the moment stamped in it, `at` (slot None: the
    key has no limit, and `at` is the caller's clock)."""

    key: str
    slot: int | None
    at: datetime


class Limiters:
    """Rate limiters over the database of `store`, timed by `clock` (on PostgreSQL the
    database server's, ADR 0005). Thread-safe: every call is its own transaction."""

    def __init__(
        self, store: RateLimitStore, clock: Clock, *, poll_seconds: float = POLL_SECONDS
    ) -> None:
        self._store = store
        self._clock = clock
        self._poll_seconds = poll_seconds

    @classmethod
    def over(
        cls, engine: Engine, clock: Clock | None = None, *, server_clock: bool | None = None
    ) -> Limiters:
        """Limiters on `engine`'s database, with its one clock unless `clock` is given.
        `server_clock`: whether grants are stamped with the database server's clock (None: the
        database's default, True on PostgreSQL; see `RateLimitStore`)."""
        store = RateLimitStore(engine, server_clock=server_clock)
        return cls(store, clock or backend_for(engine).clock())

    # --- configuration -----------------------------------------------------------------------
    def configure(self, key: str, limit: RateLimit | str | None) -> KeyState:
        """Set (or replace) `key`'s limit; None: no limit, only pauses. Text is parsed as
        `RateLimit.parse` does ("10/s")."""
        check_key(key)
        if isinstance(limit, str):
            limit = RateLimit.parse(limit)
        return self._store.configure(key, limit, self._clock())

    def configure_all(self, limits: Mapping[str, RateLimit]) -> None:
        for key, limit in limits.items():
            self.configure(key, limit)

    # --- grants ------------------------------------------------------------------------------
    def try_acquire(self, key: str) -> float | None:
        """Take a grant now if one is free: None when granted, else the seconds until the next
        possible grant (the pause's end, or the oldest grant's period end)."""
        taken = self.try_take(key)
        return taken if isinstance(taken, float) else None

    def try_take(self, key: str) -> Grant | float:
        """`try_acquire` that returns the grant itself (for `answered`), or the seconds to
        wait. A key without a limit, and not paused, gives a grant with no slot."""
        check_key(key)
        for _ in range(RACE_RETRIES):
            now = self._clock()
            granted = self._store.grant(key, now)
            if granted is not None:
                return Grant(key, granted.slot, granted.at)
            wait = _seconds_to_wait(self._store.denial(key, now), now)
            if wait is None:
                return Grant(key, None, now)  # no limit and no pause: nothing to hold back
            if wait > 0:
                return wait
        return 0.0

    def answered(self, grant: Grant) -> None:
        """Count `grant` from now rather than from when it was given, because the request it
        let through has its answer: a server sees a request some time after its grant, and
        counting to the answer keeps a slow request and a fast one after it from landing in one
        of the server's windows beyond the limit."""
        if grant.slot is not None:
            self._store.restamp(grant.key, grant.slot, grant.at, self._clock())

    def acquire(
        self,
        key: str,
        abort: StopSignal | None = None,
        *,
        deadline_seconds: float | None = None,
    ) -> None:
        """Block until `key` grants. Raises JobAbortedError when `abort` is set while waiting,
        and RateLimited(key, retry_after) when the next possible grant is later than
        `deadline_seconds` from the call (at once: it does not sleep until the deadline)."""
        stop: StopSignal = abort if abort is not None else threading.Event()
        started = self._clock()
        while True:
            if stop.is_set():
                raise JobAbortedError(f"the wait for rate limit {key!r} was aborted")
            wait = self.try_acquire(key)
            if wait is None:
                return
            if deadline_seconds is not None:
                left = deadline_seconds - (self._clock() - started).total_seconds()
                if wait > left:
                    raise RateLimited(key, wait, "the wait would pass its deadline", enforced=True)
            if stop.wait(min(wait, self._poll_seconds)):
                raise JobAbortedError(f"the wait for rate limit {key!r} was aborted")

    # --- pauses ------------------------------------------------------------------------------
    def pause(self, key: str, until: datetime | float, reason: str = "") -> KeyState:
        """Pause `key` for every process until `until` (a time, or seconds from now); a later
        pause already there is kept."""
        check_key(key)
        now = self._clock()
        if isinstance(until, datetime):
            end = until
        else:
            if not 0 <= until <= MAX_PAUSE_SECONDS:
                raise ValueError(f"a pause is 0 to {MAX_PAUSE_SECONDS:g} seconds, got {until!r}")
            end = now + timedelta(seconds=until)
        return self._store.pause(key, end, reason[:MAX_REASON_LENGTH], now)

    def resume(self, key: str) -> KeyState:
        """End `key`'s pause now. Raises RateLimitKeyNotFoundError for an unknown key."""
        return self._store.resume(check_key(key), self._clock())

    def get(self, key: str) -> KeyState:
        return self._store.get(check_key(key), self._clock())

    def list(self) -> list[KeyState]:
        """Every key configured or paused, by key."""
        return self._store.list(self._clock())

    def for_key(self, key: str, abort: StopSignal | None = None) -> KeyLimiter:
        return KeyLimiter(self, check_key(key), abort)

    def seconds_until(self, moment: datetime) -> float:
        return max(0.0, (moment - self._clock()).total_seconds())


class KeyLimiter:
    """One key's limiter bound to a job's abort signal: what `context.limiter(key)` returns."""

    def __init__(self, limiters: Limiters, key: str, abort: StopSignal | None) -> None:
        self._limiters = limiters
        self.key = key
        self._abort = abort

    def acquire(self, deadline_seconds: float | None = None) -> None:
        """Block until granted; raises RateLimited past `deadline_seconds` (let it propagate:
        the job is snoozed until the grant is possible), JobAbortedError on the job's abort."""
        self._limiters.acquire(self.key, self._abort, deadline_seconds=deadline_seconds)

    async def aacquire(self, deadline_seconds: float | None = None) -> None:
        """`acquire` for an `async def` handler: the wait runs on a thread, the loop free."""
        await asyncio.to_thread(self.acquire, deadline_seconds)

    def try_acquire(self) -> float | None:
        return self._limiters.try_acquire(self.key)

    def pause(self, seconds: float, reason: str = "") -> KeyState:
        return self._limiters.pause(self.key, seconds, reason)


def _seconds_to_wait(denial: Denial | None, now: datetime) -> float | None:
    """Seconds until a grant may be possible; None when nothing holds the key back."""
    if denial is None:
        return None
    waits: list[float] = []
    if denial.paused_until is not None:
        waits.append((denial.paused_until - now).total_seconds())
    if denial.limit is not None and denial.oldest_us is not None:
        free_at_us = denial.oldest_us + denial.limit.period_us
        waits.append((free_at_us - microseconds(now)) / 1_000_000)
    if not waits:
        return None
    return max(waits)
