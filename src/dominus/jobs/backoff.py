"""The one backoff curve behind every retry and backoff delay in DOMINUS.

`Backoff` is pure: the wait after the n-th consecutive failure is

    min(max, base × 2^min(n−1, max_exponent)) × (a random factor in [1 − jitter, 1 + jitter])

and never above `max` (the cap is a ceiling: jitter may shorten a capped delay but never lengthen
it). n below 1 counts as 1. `FailureStreak` adds the only state callers keep: how many failures
in a row, reset by a success.

`DatabaseBackoff` is the worker's and the scheduler's loop when the database fails (SQLITE_BUSY
and the rest): after n failed ticks the next waits `poll × 2^min(n−1, 5)`, capped at 30 s, with
±20 % jitter; a tick that completes without a database error starts the streak over.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from dominus.errors import DatabaseBusyError, DatabaseError

# 2^DEFAULT_MAX_EXPONENT is far beyond any sensible cap; it keeps the float from overflowing.
DEFAULT_MAX_EXPONENT = 60

# The database backoff: growth stops at 2^5 × poll, and no wait exceeds 30 s whatever the poll.
DATABASE_MAX_EXPONENT = 5
DATABASE_CAP_SECONDS = 30.0
DATABASE_JITTER = 0.2


@dataclass(frozen=True, slots=True)
class Backoff:
    base_seconds: float
    max_seconds: float = math.inf  # no cap: the caller bounds the number of attempts
    jitter: float = 0.0
    max_exponent: int = DEFAULT_MAX_EXPONENT

    def __post_init__(self) -> None:
        if self.base_seconds < 0 or self.max_seconds < 0:
            raise ValueError("backoff base and cap must not be negative")
        if not 0 <= self.jitter < 1:
            raise ValueError("backoff jitter must be in [0, 1)")
        if self.max_exponent < 0:
            raise ValueError("backoff max_exponent must not be negative")

    def delay(self, failures: int, uniform: Callable[[], float] = random.random) -> float:
        """Seconds to wait after the `failures`-th failure in a row (1-based). `uniform` draws
        from [0, 1) (a seeded `random.Random().random` makes the jitter reproducible); it is
        not called when there is no jitter."""
        exponent = min(max(failures - 1, 0), self.max_exponent)
        raw = min(self.max_seconds, self.base_seconds * 2.0**exponent)
        if self.jitter == 0:
            return raw
        factor = 1.0 - self.jitter + 2.0 * self.jitter * uniform()
        return min(self.max_seconds, raw * factor)


class FailureStreak:
    """Failures in a row, and the backoff after each: `failed()` counts one more and returns how
    long to wait; `succeeded()` starts over from the shortest delay."""

    def __init__(self, backoff: Backoff, uniform: Callable[[], float] = random.random) -> None:
        self._backoff = backoff
        self._uniform = uniform
        self.consecutive_failures = 0

    def failed(self) -> float:
        self.consecutive_failures += 1
        return self._backoff.delay(self.consecutive_failures, self._uniform)

    def succeeded(self) -> None:
        self.consecutive_failures = 0


class DatabaseBackoff(FailureStreak):
    """The worker loop's (and the scheduler's) wait after ticks the database failed."""

    def __init__(
        self, poll_interval_seconds: float, uniform: Callable[[], float] = random.random
    ) -> None:
        curve = Backoff(
            base_seconds=poll_interval_seconds,
            max_seconds=DATABASE_CAP_SECONDS,
            jitter=DATABASE_JITTER,
            max_exponent=DATABASE_MAX_EXPONENT,
        )
        super().__init__(curve, uniform)

    def log_failed_tick(
        self, log: logging.Logger, loop: str, error: Exception, delay: float
    ) -> None:
        """One line for a failed tick of `loop` ("worker", "scheduler"): busy at WARNING, another
        database error at ERROR, anything else with its traceback."""
        failures = self.consecutive_failures
        if isinstance(error, DatabaseBusyError):
            log.warning("database busy (%d in a row); next try in %.2f s", failures, delay)
        elif isinstance(error, DatabaseError):
            log.error("%s (%d in a row); next try in %.2f s", error, failures, delay)
        else:
            log.exception("%s tick failed (%d in a row); next try in %.2f s", loop, failures, delay)
