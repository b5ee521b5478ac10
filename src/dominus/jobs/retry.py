"""Retry backoff: exponential with jitter, capped.

Defaults (overridable per job type, and globally with JOB_RETRY_BASE_MS / JOB_RETRY_MAX_MS):
the n-th failed attempt waits `base × 2^(n−1)` seconds, capped at `max`, then scaled by a random
factor in [1 − jitter, 1 + jitter] (jitter 0.2), never above the cap. With base 1 s and cap
10 min: about 1 s, 2 s, 4 s, 8 s, ... 10 min. The curve is `Backoff`'s, like every other
backoff in DOMINUS.

When a failed attempt's job is due again is worked out in one place, `RetryPolicies`: for the
worker's own failed attempts and for the jobs it takes back from silent or dead workers alike.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from dominus.jobs.backoff import Backoff

if TYPE_CHECKING:  # the registry names each type's policy, so it imports this module
    from dominus.jobs.registry import HandlerRegistry


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


class RetryPolicies:
    """The policy each job type follows: its own if its registration names one, else the
    worker's default (also for types this worker has not registered, whose jobs it may take
    back from other workers)."""

    def __init__(self, registry: HandlerRegistry, default: RetryPolicy) -> None:
        self._registry = registry
        self._default = default

    def policy_for(self, job_type: str) -> RetryPolicy:
        if job_type not in self._registry:
            return self._default
        return self._registry.get(job_type).retry_policy or self._default

    def delay(self, job_type: str, failed_attempt: int) -> float:
        """Seconds to wait after attempt `failed_attempt` (1-based) of a `job_type` job failed:
        the store's `RetryDelay`, for the jobs it takes back."""
        return self.policy_for(job_type).delay_seconds(failed_attempt)

    def retry_at(self, job_type: str, failed_attempt: int, now: datetime) -> datetime:
        """When the job is due again after attempt `failed_attempt` failed at `now`."""
        return now + timedelta(seconds=self.delay(job_type, failed_attempt))
