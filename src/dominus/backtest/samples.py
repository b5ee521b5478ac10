"""One backtest sample: a sold name, the score computed before its sale, and what it sold for.

Read from `backtest_signals` (snapshot.py writes them); everything the report, the suggester, the
tuner and the calibration need is here, so none of them reads the database."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

Bucket = Literal["low", "mid", "high"]
BUCKETS: tuple[Bucket, ...] = ("low", "mid", "high")
LOW_BELOW = 0.3  # low < 0.3 ≤ mid < 0.6 ≤ high
HIGH_FROM = 0.6


def confidence_bucket(confidence: float) -> Bucket:
    if confidence < LOW_BELOW:
        return "low"
    if confidence < HIGH_FROM:
        return "mid"
    return "high"


@dataclass(frozen=True)
class Sample:
    domain: str
    sale_date: date
    realised: float  # the sale price, > 0
    predicted: float  # the expected value when scored
    buy_max: float
    confidence: float
    weighted_score: float
    # intrinsic, commercial, market, expiry; None: the signal had no evidence
    signals: Mapping[str, float | None]
    recommended: bool = False
    holding_cost: float | None = None
    carrying_cost: float | None = None
    baseline: float | None = None  # the comparable-sales-only prediction
    baseline_sales: int = 0
    # anchors (market, commercial, expiry), coverage_ratio, gates, trademark_clear
    inputs: Mapping[str, Any] = field(default_factory=dict)
    outcome_id: int = 0

    @property
    def bucket(self) -> Bucket:
        return confidence_bucket(self.confidence)

    @property
    def signed_error(self) -> float:
        return self.predicted - self.realised

    @property
    def absolute_error(self) -> float:
        return abs(self.signed_error)
