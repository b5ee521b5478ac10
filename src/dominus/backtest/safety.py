"""The tuner's safety checks. Every check is evaluated and reported, passed or not:

    sample_size      the snapshot holds at least AUTO_TUNE_MIN_SAMPLE (20) sales
    max_delta        each |suggested − current| ≤ AUTO_TUNE_MAX_DELTA (0.05)
    max_drift        each |suggested − default| ≤ AUTO_TUNE_MAX_DRIFT (0.20)
    sum_to_one       the suggested weights sum to 1 (within 1e-9)
    backtest_error   the MAE of the snapshot re-weighed with the suggested weights is not above
                     the MAE with the current ones
All weights are shares of 1."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dominus.scoring.weights import SIGNALS, Weights

SUM_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Limits:
    min_sample: int = 20
    max_delta: float = 0.05
    max_drift: float = 0.20


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def _largest(pairs: dict[str, float]) -> tuple[str, float]:
    name = max(pairs, key=lambda key: abs(pairs[key]))
    return name, pairs[name]


def safety_checks(
    *,
    sample_size: int,
    current: Weights,
    suggested: Weights,
    defaults: Weights,
    error_current: float | None,
    error_suggested: float | None,
    limits: Limits,
) -> list[Check]:
    deltas = {name: getattr(suggested, name) - getattr(current, name) for name in SIGNALS}
    drifts = {name: getattr(suggested, name) - getattr(defaults, name) for name in SIGNALS}
    delta_name, delta = _largest(deltas)
    drift_name, drift = _largest(drifts)
    total = suggested.total
    checks = [
        Check(
            "sample_size",
            sample_size >= limits.min_sample,
            f"{sample_size} sales (AUTO_TUNE_MIN_SAMPLE {limits.min_sample})",
        ),
        Check(
            "max_delta",
            abs(delta) <= limits.max_delta + SUM_TOLERANCE,
            f"largest change {delta_name} {delta:+.4f} (AUTO_TUNE_MAX_DELTA {limits.max_delta})",
        ),
        Check(
            "max_drift",
            abs(drift) <= limits.max_drift + SUM_TOLERANCE,
            f"furthest from default {drift_name} {drift:+.4f} "
            f"(AUTO_TUNE_MAX_DRIFT {limits.max_drift})",
        ),
        Check(
            "sum_to_one",
            math.isclose(total, 1.0, rel_tol=0, abs_tol=SUM_TOLERANCE),
            f"suggested weights sum to {total:.12g}",
        ),
    ]
    if error_current is None or error_suggested is None:
        checks.append(Check("backtest_error", False, "no sample to compare the errors on"))
    else:
        checks.append(
            Check(
                "backtest_error",
                error_suggested <= error_current + 1e-9,
                f"MAE suggested {error_suggested:,.2f} vs current {error_current:,.2f}",
            )
        )
    return checks
