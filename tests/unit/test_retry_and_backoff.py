from __future__ import annotations

import pytest

from dominus.jobs.backoff import DatabaseBackoff
from dominus.jobs.retry import RetryPolicy


def test_retry_delay_doubles_per_attempt_without_jitter() -> None:
    policy = RetryPolicy(base_seconds=1, max_seconds=600, jitter=0)
    assert [policy.delay_seconds(attempt) for attempt in (1, 2, 3, 4)] == [1, 2, 4, 8]


def test_retry_delay_is_capped() -> None:
    policy = RetryPolicy(base_seconds=1, max_seconds=10, jitter=0.2)
    assert policy.delay_seconds(50, uniform=lambda: 1.0) == 10
    assert policy.delay_seconds(10_000, uniform=lambda: 0.5) == 10


@pytest.mark.parametrize(("draw", "expected"), [(0.0, 3.2), (0.5, 4.0), (1.0, 4.8)])
def test_retry_jitter_spans_plus_minus_twenty_percent(draw: float, expected: float) -> None:
    policy = RetryPolicy(base_seconds=1, max_seconds=600, jitter=0.2)
    assert policy.delay_seconds(3, uniform=lambda: draw) == pytest.approx(expected)


def test_invalid_policies_are_refused() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(base_seconds=-1)
    with pytest.raises(ValueError):
        RetryPolicy(jitter=1.5)


def test_busy_backoff_follows_the_seed_formula() -> None:
    backoff = DatabaseBackoff(poll_interval_seconds=0.5, uniform=lambda: 0.5)
    delays = [backoff.failed() for _ in range(8)]
    # poll × 2^min(n−1, 5): 0.5, 1, 2, 4, 8, 16, then capped at 16 (2^5), never above 30 s.
    assert delays == [0.5, 1, 2, 4, 8, 16, 16, 16]
    backoff.succeeded()
    assert backoff.failed() == 0.5


def test_busy_backoff_caps_at_thirty_seconds_and_jitters() -> None:
    high = DatabaseBackoff(poll_interval_seconds=5, uniform=lambda: 1.0)
    low = DatabaseBackoff(poll_interval_seconds=5, uniform=lambda: 0.0)
    for _ in range(10):
        high_delay, low_delay = high.failed(), low.failed()
    assert high_delay == 30
    assert low_delay == pytest.approx(24)
    first = DatabaseBackoff(poll_interval_seconds=5, uniform=lambda: 0.0).failed()
    assert first == pytest.approx(4)
