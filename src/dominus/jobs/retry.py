"""Retry backoff: exponential with jitter, capped.

Defaults (overridable per job type, and globally with JOB_RETRY_BASE_MS / JOB_RETRY_MAX_MS):
the n-th failed attempt waits `base × 2^(n−1)` seconds, capped at `max`, then scaled by a random
factor in [1 − jitter, 1 + jitter] (jitter 0.2), never above the cap. With base 1 s and cap
10 min: about 1 s, 2 s, 4 s, 8 s, ... 10 min.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

# 2^EXPONENT_LIMIT is far beyond any sensible cap; it keeps the float from overflowing.
EXPONENT_LIMIT = 60


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    base_seconds: float = 1.0
    max_seconds: float = 600.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.base_seconds < 0 or self.max_seconds < 0:
            raise ValueError("retry base and cap must not be negative")
        if not 0 <= self.jitter < 1:
            raise ValueError("retry jitter must be in [0, 1)")

    def delay_seconds(
        self, failed_attempt: int, uniform: Callable[[], float] = random.random
    ) -> float:
        """Seconds to wait after attempt number `failed_attempt` (1-based) failed."""
        exponent = min(max(failed_attempt - 1, 0), EXPONENT_LIMIT)
        raw = min(self.max_seconds, self.base_seconds * 2.0**exponent)
        factor = 1.0 - self.jitter + 2.0 * self.jitter * uniform()
        return min(self.max_seconds, raw * factor)
