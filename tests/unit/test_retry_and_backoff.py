from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel

from dominus.cli.schema_wait import LOOKS
from dominus.jobs.backoff import DEFAULT_MAX_EXPONENT, Backoff, DatabaseBackoff, FailureStreak
from dominus.jobs.notifications import RECONNECT_BACKOFF
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.retry import RetryPolicies, RetryPolicy
from dominus.notify.webhook import WebhookNotifier
from dominus.pipeline.runner import STAGE_RETRIES, STAGE_RETRY_BACKOFF
from dominus.providers.whois import lookup_backoff


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


class NoPayload(BaseModel):
    pass


def _policies() -> RetryPolicies:
    registry = HandlerRegistry()
    registry.register("own", lambda _p, _c: None, NoPayload, retry_policy=RetryPolicy(5, 50, 0))
    registry.register("plain", lambda _p, _c: None, NoPayload)
    return RetryPolicies(registry, default=RetryPolicy(1, 600, jitter=0))


def test_a_type_with_a_policy_of_its_own_follows_it() -> None:
    policies = _policies()
    assert [policies.delay("own", attempt) for attempt in (1, 2, 5)] == [5, 10, 50]


def test_a_type_without_one_and_a_type_not_registered_follow_the_default() -> None:
    policies = _policies()
    assert [policies.delay("plain", attempt) for attempt in (1, 3)] == [1, 4]
    # Jobs of any type may be taken back from another worker: no error for an unknown one.
    assert [policies.delay("registered elsewhere", attempt) for attempt in (1, 3)] == [1, 4]


def test_the_retry_time_is_the_delay_after_the_failure() -> None:
    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    policies = _policies()
    assert policies.retry_at("own", 2, now) == now + timedelta(seconds=10)
    assert policies.retry_at("plain", 1, now) == now + timedelta(seconds=1)


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


# --- the Backoff curve itself --------------------------------------------------------------


def test_backoff_doubles_from_the_base() -> None:
    curve = Backoff(base_seconds=0.25)
    assert [curve.delay(n) for n in (1, 2, 3, 4, 5)] == [0.25, 0.5, 1.0, 2.0, 4.0]


def test_backoff_counts_zero_and_negative_failures_as_the_first() -> None:
    curve = Backoff(base_seconds=3)
    assert curve.delay(0) == curve.delay(-5) == curve.delay(1) == 3


def test_backoff_is_capped() -> None:
    curve = Backoff(base_seconds=1, max_seconds=5)
    assert [curve.delay(n) for n in (3, 4, 5, 100)] == [4, 5, 5, 5]


def test_backoff_without_a_cap_grows_until_the_exponent_limit() -> None:
    assert Backoff(base_seconds=1).delay(31) == 2.0**30
    assert Backoff(base_seconds=1).delay(10_000) == 2.0**DEFAULT_MAX_EXPONENT
    assert Backoff(base_seconds=1, max_exponent=2).delay(10) == 4


@pytest.mark.parametrize(("draw", "expected"), [(0.0, 6.0), (0.25, 9.0), (0.5, 12.0), (1.0, 18.0)])
def test_backoff_jitter_scales_by_one_plus_or_minus_jitter(draw: float, expected: float) -> None:
    # 3rd failure: 3 × 2^2 = 12, times 1 − 0.5 + 2 × 0.5 × draw (from 0.5 to 1.5).
    curve = Backoff(base_seconds=3, max_seconds=100, jitter=0.5)
    assert curve.delay(3, uniform=lambda: draw) == pytest.approx(expected)


def test_jitter_applies_to_the_capped_delay_and_never_exceeds_the_cap() -> None:
    curve = Backoff(base_seconds=1, max_seconds=10, jitter=0.2)
    assert curve.delay(20, uniform=lambda: 0.0) == pytest.approx(8.0)  # 10 × 0.8
    assert curve.delay(20, uniform=lambda: 0.999) == 10


def test_backoff_without_jitter_draws_nothing() -> None:
    def no_draw() -> float:
        raise AssertionError("drew a random number without jitter")

    assert Backoff(base_seconds=1, max_seconds=3).delay(5, uniform=no_draw) == 3


def test_a_seeded_generator_gives_the_same_delays_every_time() -> None:
    curve = Backoff(base_seconds=1, max_seconds=600, jitter=0.2)
    first = [curve.delay(n, random.Random(17).random) for n in (1, 2, 3)]
    again = [curve.delay(n, random.Random(17).random) for n in (1, 2, 3)]
    assert first == again
    draw = random.Random(17).random()
    assert first == pytest.approx([scale * (0.8 + 0.4 * draw) for scale in (1, 2, 4)])


def test_jittered_delays_stay_within_their_bounds() -> None:
    curve = Backoff(base_seconds=2, max_seconds=100, jitter=0.2)
    rng = random.Random(3)
    for n in range(1, 12):
        raw = min(100, 2 * 2 ** (n - 1))
        assert raw * 0.8 <= curve.delay(n, rng.random) <= min(100, raw * 1.2)


def test_invalid_curves_are_refused() -> None:
    for bad in (
        {"base_seconds": -1},
        {"base_seconds": 1, "max_seconds": -1},
        {"base_seconds": 1, "jitter": 1.0},
        {"base_seconds": 1, "jitter": -0.1},
        {"base_seconds": 1, "max_exponent": -1},
    ):
        with pytest.raises(ValueError):
            Backoff(**bad)


def test_a_failure_streak_grows_and_starts_over_after_a_success() -> None:
    streak = FailureStreak(Backoff(base_seconds=1, max_seconds=4))
    assert [streak.failed() for _ in range(4)] == [1, 2, 4, 4]
    assert streak.consecutive_failures == 4
    streak.succeeded()
    assert streak.consecutive_failures == 0
    assert streak.failed() == 1


# --- each call site keeps its curve ---------------------------------------------------------


def test_the_webhook_waits_half_a_second_doubling_up_to_ten() -> None:
    hook = WebhookNotifier("http://127.0.0.1:9/", timeout_seconds=1, retries=10)
    assert [hook.delay_before(attempt) for attempt in range(2, 9)] == [0.5, 1, 2, 4, 8, 10, 10]


@pytest.mark.parametrize(("draw", "factor"), [(0.0, 0.8), (0.5, 1.0), (1.0, 1.2)])
def test_rdap_and_whois_retries_double_with_twenty_percent_jitter(
    draw: float, factor: float
) -> None:
    curve = lookup_backoff(2.0)
    delays = [curve.delay(n, uniform=lambda: draw) for n in (1, 2, 3, 9)]
    assert delays == pytest.approx([2 * factor, 4 * factor, 8 * factor, 512 * factor])


def test_a_pipeline_stage_is_retried_after_one_two_and_four_seconds() -> None:
    assert STAGE_RETRIES == 3
    middle = [STAGE_RETRY_BACKOFF.delay(n, uniform=lambda: 0.5) for n in (1, 2, 3)]
    assert middle == pytest.approx([1, 2, 4])
    assert STAGE_RETRY_BACKOFF.delay(3, uniform=lambda: 1.0) == pytest.approx(4.8)  # no cap


def test_the_schema_wait_looks_again_after_half_a_second_doubling_up_to_five() -> None:
    looks = FailureStreak(LOOKS)
    assert [looks.failed() for _ in range(6)] == [0.5, 1, 2, 4, 5, 5]


def test_the_listen_connection_reconnects_after_half_a_second_doubling_up_to_ten() -> None:
    reconnects = FailureStreak(RECONNECT_BACKOFF)
    assert [reconnects.failed() for _ in range(7)] == [0.5, 1, 2, 4, 8, 10, 10]
