"""The tuner's safety checks: each one fails on its own."""

from __future__ import annotations

from typing import Any

import pytest

from dominus.backtest.safety import Limits, safety_checks
from dominus.scoring.weights import Weights

DEFAULTS = Weights()
# +0.02 on expiry, −0.02 on intrinsic: sums to 1, close to the defaults
NUDGED = Weights(0.28, 0.35, 0.25, 0.12)
PASSING: dict[str, Any] = {
    "sample_size": 20,
    "current": DEFAULTS,
    "suggested": NUDGED,
    "defaults": DEFAULTS,
    "error_current": 100.0,
    "error_suggested": 100.0,
    "limits": Limits(),
}


def failed(**changes: Any) -> list[str]:
    checks = safety_checks(**(PASSING | changes))
    return [check.name for check in checks if not check.passed]


def test_every_check_passes_on_a_safe_suggestion() -> None:
    assert failed() == []
    assert len(safety_checks(**PASSING)) == 5


@pytest.mark.parametrize(
    ("changes", "check"),
    [
        ({"sample_size": 19}, "sample_size"),
        # a 0.06 step, every weight still within 0.20 of the defaults and summing to 1
        ({"suggested": Weights(0.24, 0.35, 0.25, 0.16)}, "max_delta"),
        # from a current set far from the defaults: a small step, yet 0.22 from the default
        (
            {
                "current": Weights(0.50, 0.25, 0.15, 0.10),
                "suggested": Weights(0.52, 0.23, 0.15, 0.10),
            },
            "max_drift",
        ),
        ({"suggested": Weights(0.28, 0.35, 0.25, 0.13)}, "sum_to_one"),
        ({"error_suggested": 100.01}, "backtest_error"),
    ],
)
def test_each_check_fails_on_its_own(changes: dict[str, Any], check: str) -> None:
    assert failed(**changes) == [check]


def test_the_limits_are_the_settings() -> None:
    assert failed(limits=Limits(min_sample=21)) == ["sample_size"]
    assert failed(limits=Limits(max_delta=0.01)) == ["max_delta"]
    assert failed(limits=Limits(max_drift=0.01)) == ["max_drift"]


def test_no_sample_fails_the_error_check() -> None:
    assert "backtest_error" in failed(error_current=None, error_suggested=None)
