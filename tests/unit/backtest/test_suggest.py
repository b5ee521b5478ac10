"""The weight suggester: holds, moves, caps and renormalisation."""

from __future__ import annotations

import pytest

from dominus.backtest.suggest import signal_lift, suggest
from dominus.scoring.weights import SIGNALS, Weights
from tests.unit.backtest.helpers import sample


def split(signal: str, high: int, low: int, high_price: float, low_price: float) -> list:
    return [sample(high_price, **{signal: 0.8}) for _ in range(high)] + [
        sample(low_price, **{signal: 0.2}) for _ in range(low)
    ]


def test_a_signal_with_ten_per_half_and_a_lift_of_50_moves_up() -> None:
    samples = split("expiry", 10, 10, 1050, 1000)  # lift exactly 50
    lift = signal_lift("expiry", samples)
    assert (lift.high, lift.low, lift.lift, lift.action) == (10, 10, pytest.approx(50.0), "up")
    after = suggest(samples, Weights()).after
    # 0.10 + 0.02, every other weight held, then all divided by 1.02
    assert after.expiry == pytest.approx(0.12 / 1.02)
    assert after.intrinsic == pytest.approx(0.30 / 1.02)
    assert after.commercial == pytest.approx(0.35 / 1.02)
    assert after.market == pytest.approx(0.25 / 1.02)
    assert after.total == pytest.approx(1.0)


def test_a_negative_lift_moves_down() -> None:
    samples = split("market", 12, 15, 400, 900)
    after = suggest(samples, Weights()).after
    assert after.market == pytest.approx(0.23 / 0.98)
    assert after.total == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("high", "low", "high_price", "low_price", "reason"),
    [
        (9, 10, 5000, 100, "9 high and 10 low"),  # too few high
        (10, 9, 5000, 100, "10 high and 9 low"),  # too few low
        (10, 10, 1049.99, 1000, "lift 49.99 is under 50"),
    ],
)
def test_holds(high: int, low: int, high_price: float, low_price: float, reason: str) -> None:
    samples = split("commercial", high, low, high_price, low_price)
    lift = signal_lift("commercial", samples)
    assert lift.action == "hold"
    assert reason in lift.reason
    suggestion = suggest(samples, Weights())
    assert not suggestion.changed
    assert suggestion.after == suggestion.before


def test_a_signal_without_evidence_is_left_out_of_its_split() -> None:
    samples = split("expiry", 10, 10, 2000, 100) + [sample(1, expiry=None) for _ in range(30)]
    lift = signal_lift("expiry", samples)
    assert (lift.high, lift.low) == (10, 10)
    assert lift.mean_low == pytest.approx(100.0)


def test_moves_are_capped_per_round() -> None:
    samples = split("expiry", 10, 10, 2000, 100)
    after = suggest(samples, Weights(), step=0.08, cap=0.05).after
    assert after.expiry == pytest.approx(0.15 / 1.05)  # +0.05, not +0.08


def test_the_result_is_renormalised_from_relative_weights() -> None:
    # (3, 3.5, 2.5, 1) are the defaults as relative weights: the suggestion starts from shares
    samples = split("intrinsic", 10, 10, 500, 100) + split("expiry", 10, 10, 500, 100)
    suggestion = suggest(samples, Weights(3, 3.5, 2.5, 1))
    assert suggestion.before.intrinsic == pytest.approx(0.30)
    assert sum(getattr(suggestion.after, name) for name in SIGNALS) == pytest.approx(1.0)
    assert suggestion.after.intrinsic == pytest.approx(0.32 / 1.04)
    assert suggestion.after.expiry == pytest.approx(0.12 / 1.04)


def test_no_weight_goes_below_zero() -> None:
    samples = split("expiry", 10, 10, 100, 900)
    after = suggest(samples, Weights(0.5, 0.3, 0.19, 0.01)).after
    assert after.expiry == 0.0
    assert after.total == pytest.approx(1.0)
