"""Retry backoff: exponential with jitter, capped.

Defaults (overridable per job type, and globally with JOB_RETRY_BASE_MS / JOB_RETRY_MAX_MS):
the n-th failed attempt waits `base × 2^(n−1)` seconds, capped at `max`, then scaled by a random
factor in [1 − jitter, 1 + jitter] (jitter 0.2), never above the cap. With base 1 s and cap
10 min: about 1 s, 2 s, 4 s, 8 s, ... 10 min. The curve is `Backoff`'s, like every other
backoff in DOMINUS.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from dominus.jobs.backoff import Backoff


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    base_seconds: float = 1.0
    max_seconds: float = 600.0
    jitter: float = 0.2
    _backoff: Backoff = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built once, here, so a policy with a negative base or a jitter outside [0, 1) is
        # refused when it is configured rather than when the first job fails.
        curve = Backoff(self.base_seconds, self.max_seconds, self.jitter)
        object.__setattr__(self, "_backoff", curve)

    def delay_seconds(
        self, failed_attempt: int, uniform: Callable[[], float] = random.random
    ) -> float:
        """Seconds to wait after attempt number `failed_attempt` (1-based) failed."""
        return self._backoff.delay(failed_attempt, uniform)
