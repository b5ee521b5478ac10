"""Adaptive backoff of the worker loop when the database fails (SQLITE_BUSY and the rest).

After n consecutive failed ticks the next tick waits `poll × 2^min(n−1, 5)`, capped at 30 s,
with ±20 % jitter (never above the cap). Any tick that completes without a database error
resets n to 0.
"""

from __future__ import annotations

import random
from collections.abc import Callable

MAX_EXPONENT = 5
CAP_SECONDS = 30.0
JITTER = 0.2


class DatabaseBackoff:
    def __init__(
        self, poll_interval_seconds: float, uniform: Callable[[], float] = random.random
    ) -> None:
        self._poll = poll_interval_seconds
        self._uniform = uniform
        self.consecutive_failures = 0

    def failed(self) -> float:
        """Count one more failed tick; return how long to wait before the next one."""
        self.consecutive_failures += 1
        exponent = min(self.consecutive_failures - 1, MAX_EXPONENT)
        delay = min(self._poll * 2**exponent, CAP_SECONDS)
        # The cap is a ceiling: jitter may shorten a capped delay but never lengthen it.
        jittered: float = delay * (1 - JITTER + 2 * JITTER * self._uniform())
        return min(CAP_SECONDS, jittered)

    def succeeded(self) -> None:
        self.consecutive_failures = 0
