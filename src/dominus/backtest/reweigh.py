"""A sample's expected value under other weights, from the signals and anchors its score held.

The engine's own formulas (scoring/weighting.py, value.py): the weights become shares, the
signals with evidence decide the coverage, reallocation and normalisation give the effective
weights, the weighted score is their weighted average, and the anchor is the shares-weighted
mean of the evidence's anchors (the floor with none). EV = weighted score × anchor, in cents.
The anchors are those stored with the score, so the price levels stay as they were then; only
the weights change. With the weights the score was computed with, this gives its EV back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dominus.backtest.samples import Sample
from dominus.scoring.confidence import Coverage
from dominus.scoring.config import ScoringConfig
from dominus.scoring.weighting import shares_of, weighted_score, weighting
from dominus.scoring.weights import Weights


def _anchor(shares: Weights, anchors: Mapping[str, Any], floor: float) -> float:
    present = [
        (getattr(shares, name), anchors.get(name))
        for name in ("market", "commercial", "expiry")
        if anchors.get(name) is not None
    ]
    weight = sum(share for share, _ in present)
    if weight <= 0:
        return floor
    return float(sum(share * float(value or 0.0) for share, value in present) / weight)


def expected_value(sample: Sample, weights: Weights, config: ScoringConfig) -> float:
    shares = shares_of(weights)
    signals = sample.signals
    coverage = Coverage(
        commercial=signals.get("commercial") is not None,
        market=signals.get("market") is not None,
        expiry=signals.get("expiry") is not None,
    )
    effective = weighting(shares, coverage, config).effective
    score = weighted_score(
        effective,
        float(signals.get("intrinsic") or 0.0),
        signals.get("commercial"),
        signals.get("market"),
        signals.get("expiry"),
    )
    floor = float(sample.inputs.get("anchor_floor", config.anchor_floor))
    return round(score * _anchor(shares, sample.inputs.get("anchors") or {}, floor), 2)


def mean_absolute_error(
    samples: Sequence[Sample], weights: Weights, config: ScoringConfig
) -> float | None:
    """The MAE of the samples' EVs re-weighed with `weights` (None with no samples)."""
    if not samples:
        return None
    total = sum(abs(expected_value(s, weights, config) - s.realised) for s in samples)
    return total / len(samples)
