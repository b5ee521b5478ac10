"""Error metrics of predictions against realised sale prices (ADR 0025).

For n pairs (p predicted, r realised, r > 0):
    MAE                      mean |p − r|
    median absolute error    median |p − r|
    median APE               median |p − r| / r
    bias                     Σp / Σr (the mean prediction over the mean realised price);
                             bias % = (bias − 1) × 100
    within ±50 %             share with |p − r| ≤ 0.5 r
    R² on log prices         1 − Σ(ln r − ln p)² / Σ(ln r − mean ln r)², p taken at least 1
                             (a prediction of 0 has no logarithm); None when every r is equal
    buy-max hit rate         among predictions with a buy max > 0, the share sold at or above it
    conservative share       share with p ≤ r (the engine is meant to err low)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

LOG_FLOOR = 1.0


@dataclass(frozen=True)
class Prediction:
    predicted: float
    realised: float
    buy_max: float | None = None


@dataclass(frozen=True)
class Metrics:
    sample_size: int
    mae: float | None
    median_absolute_error: float | None
    median_ape: float | None  # a fraction: 0.25 is 25 %
    bias: float | None
    bias_percent: float | None
    within_50_percent: float | None
    r2_log: float | None
    buy_max_hit_rate: float | None
    buy_max_sample: int
    conservative_share: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _share(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def r2_log(predictions: Sequence[Prediction]) -> float | None:
    logs = [math.log(p.realised) for p in predictions]
    if len(logs) < 2:
        return None
    mean = statistics.fmean(logs)
    total = sum((value - mean) ** 2 for value in logs)
    if total == 0:
        return None
    residual = sum(
        (math.log(p.realised) - math.log(max(p.predicted, LOG_FLOOR))) ** 2 for p in predictions
    )
    return 1.0 - residual / total


def metrics(predictions: Sequence[Prediction]) -> Metrics:
    if not predictions:
        return Metrics(0, None, None, None, None, None, None, None, None, 0, None)
    errors = [abs(p.predicted - p.realised) for p in predictions]
    bias = sum(p.predicted for p in predictions) / sum(p.realised for p in predictions)
    with_buy_max = [p for p in predictions if p.buy_max is not None and p.buy_max > 0]
    return Metrics(
        sample_size=len(predictions),
        mae=statistics.fmean(errors),
        median_absolute_error=statistics.median(errors),
        median_ape=statistics.median(
            error / p.realised for error, p in zip(errors, predictions, strict=True)
        ),
        bias=bias,
        bias_percent=(bias - 1.0) * 100.0,
        within_50_percent=_share(
            [error <= 0.5 * p.realised for error, p in zip(errors, predictions, strict=True)]
        ),
        r2_log=r2_log(predictions),
        buy_max_hit_rate=_share([p.realised >= (p.buy_max or 0.0) for p in with_buy_max]),
        buy_max_sample=len(with_buy_max),
        conservative_share=_share([p.predicted <= p.realised for p in predictions]),
    )


# Which way is better, per metric: -1 lower, +1 higher, 0 closer to 1 (bias).
DIRECTIONS: dict[str, int] = {
    "mae": -1,
    "median_absolute_error": -1,
    "median_ape": -1,
    "bias": 0,
    "within_50_percent": 1,
    "r2_log": 1,
    "buy_max_hit_rate": 1,
    "conservative_share": 1,
}


def better(metric: str, engine: float | None, baseline: float | None) -> str | None:
    """'engine', 'baseline' or 'tie' for one metric; None when either is missing."""
    if engine is None or baseline is None:
        return None
    direction = DIRECTIONS[metric]
    if direction == 0:
        engine, baseline = -abs(engine - 1.0), -abs(baseline - 1.0)
        direction = 1
    if math.isclose(engine, baseline, rel_tol=1e-12, abs_tol=1e-12):
        return "tie"
    return "engine" if (engine - baseline) * direction > 0 else "baseline"
