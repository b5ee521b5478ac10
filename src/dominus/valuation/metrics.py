"""How well values match realised sale prices: pure functions, shared with the backtest.

For n sales with realised price r > 0 and a value range p10 ≤ p50 ≤ p90 (all > 0):
  spearman            Pearson correlation of the ranks of p50 and of r (tied values share
                      their mean rank); None below 2 sales or when either side is constant
  median_abs_log10    median of |log10 p50 − log10 r| (0.30 is a factor of 2 either way)
  within_2x           share of sales with r/2 ≤ p50 ≤ 2r
  r2_log              1 − Σ(log10 r − log10 p50)² ÷ Σ(log10 r − mean log10 r)²; None when every
                      r is equal
  bias                median of p50 ÷ r (1 is unbiased; 2 values twice the price)
  coverage            share of sales with p10 ≤ r ≤ p90 (a calibrated 80 % range gives 0.8)

`evaluate` reports them overall and per price band (of the realised price), venue class and TLD
group.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

PRICE_BANDS: tuple[tuple[str, float, float], ...] = (
    ("< $2k", 0.0, 2_000.0),
    ("$2k–20k", 2_000.0, 20_000.0),
    ("$20k–200k", 20_000.0, 200_000.0),
    ("≥ $200k", 200_000.0, math.inf),
)
FACTOR_OF_TWO = math.log10(2.0)


@dataclass(frozen=True)
class Prediction:
    """One sale and the value range given for it (the range of the sale's venue class)."""

    domain: str
    realised: float
    p10: float
    p50: float
    p90: float
    venue_class: str = ""
    tld_group: str = ""


@dataclass(frozen=True)
class Figures:
    n: int
    spearman: float | None
    median_abs_log10_error: float | None
    within_2x: float | None
    r2_log: float | None
    bias: float | None
    coverage: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Report:
    overall: Figures
    by_band: dict[str, Figures] = field(default_factory=dict)
    by_venue_class: dict[str, Figures] = field(default_factory=dict)
    by_tld_group: dict[str, Figures] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_dict(),
            "by_band": {key: value.to_dict() for key, value in self.by_band.items()},
            "by_venue_class": {key: value.to_dict() for key, value in self.by_venue_class.items()},
            "by_tld_group": {key: value.to_dict() for key, value in self.by_tld_group.items()},
        }


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks; tied values share the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda index: values[index])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        mean_rank = (start + end) / 2 + 1
        for position in range(start, end + 1):
            result[order[position]] = mean_rank
        start = end + 1
    return result


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) < 2:
        return None
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    return sxy / math.sqrt(sxx * syy)


def spearman(predicted: Sequence[float], realised: Sequence[float]) -> float | None:
    return pearson(ranks(predicted), ranks(realised))


def r2_log(predicted: Sequence[float], realised: Sequence[float]) -> float | None:
    logs = [math.log10(value) for value in realised]
    if len(logs) < 2:
        return None
    mean = statistics.fmean(logs)
    total = sum((value - mean) ** 2 for value in logs)
    if total == 0:
        return None
    residual = sum((math.log10(p) - log_r) ** 2 for p, log_r in zip(predicted, logs, strict=True))
    return 1.0 - residual / total


def figures(predictions: Sequence[Prediction]) -> Figures:
    """The figures of the module docstring for `predictions`."""
    if not predictions:
        return Figures(0, None, None, None, None, None, None)
    p50 = [prediction.p50 for prediction in predictions]
    realised = [prediction.realised for prediction in predictions]
    errors = [abs(math.log10(p / r)) for p, r in zip(p50, realised, strict=True)]
    return Figures(
        n=len(predictions),
        spearman=spearman(p50, realised),
        median_abs_log10_error=statistics.median(errors),
        within_2x=sum(error <= FACTOR_OF_TWO + 1e-12 for error in errors) / len(errors),
        r2_log=r2_log(p50, realised),
        bias=statistics.median(p / r for p, r in zip(p50, realised, strict=True)),
        coverage=sum(p.p10 <= p.realised <= p.p90 for p in predictions) / len(predictions),
    )


def price_band(price: float) -> str:
    for name, low, high in PRICE_BANDS:
        if low <= price < high:
            return name
    return PRICE_BANDS[-1][0]


def _grouped(
    predictions: Sequence[Prediction], key: Callable[[Prediction], str], order: Sequence[str]
) -> dict[str, Figures]:
    groups: dict[str, list[Prediction]] = {}
    for prediction in predictions:
        groups.setdefault(key(prediction), []).append(prediction)
    names = [name for name in order if name in groups] + sorted(set(groups) - set(order))
    return {name: figures(groups[name]) for name in names}


def evaluate(predictions: Sequence[Prediction]) -> Report:
    """Figures overall, per price band, per venue class and per TLD group."""
    return Report(
        overall=figures(predictions),
        by_band=_grouped(
            predictions,
            lambda p: price_band(p.realised),
            [name for name, _, _ in PRICE_BANDS],
        ),
        by_venue_class=_grouped(predictions, lambda p: p.venue_class, ["wholesale", "retail"]),
        by_tld_group=_grouped(predictions, lambda p: p.tld_group, []),
    )
