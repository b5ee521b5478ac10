"""From the four signal weights to the effective weights of one candidate, and its thresholds.

Weights are relative: they are divided by their sum first, so below "weight" means a share of 1.

Available weight (= coverage, `covered` of the confidence formula). The sum of the shares of the
signals that have evidence (commercial: keyword evidence; market: at least `min_comparables`
relevant sales; expiry: expiry facts). Intrinsic is always available. With the default weights
and every kind of evidence it is 1.0; with no market and no expiry, 0.65.

Reallocation. When the available weight is below the coverage floor (0.70), the missing weight
(1 − available weight) is moved: 60 % to intrinsic and 40 % to expiry when expiry is available,
all to intrinsic otherwise. At or above the floor nothing moves. The effective weights are then
normalised to sum to 1, and

    weighted score = Σ effective weight × signal          (a weighted average, in [0, 1])

Thresholds. ratio = min(1, available weight / 0.70);
    score threshold      = 0.20 + 0.20·ratio
    confidence threshold = 0.18 + 0.12·ratio
"""

from __future__ import annotations

from dataclasses import dataclass

from dominus.scoring.confidence import Coverage, covered_share
from dominus.scoring.config import ScoringConfig
from dominus.scoring.weights import Weights


@dataclass(frozen=True)
class Weighting:
    effective: Weights  # after reallocation and normalisation (sum 1)
    available: float  # = coverage, in [0, 1]
    reallocated: bool
    ratio: float  # min(1, available / coverage_floor)
    score_threshold: float
    confidence_threshold: float


def shares_of(weights: Weights) -> Weights:
    """The weights divided by their sum (validated first)."""
    total = weights.validate().total
    return Weights(
        intrinsic=weights.intrinsic / total,
        commercial=weights.commercial / total,
        market=weights.market / total,
        expiry=weights.expiry / total,
    )


def weighting(shares: Weights, coverage: Coverage, config: ScoringConfig) -> Weighting:
    available = covered_share(shares, coverage)
    w_intrinsic = shares.intrinsic
    w_commercial = shares.commercial if coverage.commercial else 0.0
    w_market = shares.market if coverage.market else 0.0
    w_expiry = shares.expiry if coverage.expiry else 0.0
    reallocated = available < config.coverage_floor
    if reallocated:
        missing = 1.0 - available
        if coverage.expiry:
            w_intrinsic += missing * config.reallocate_intrinsic_share
            w_expiry += missing * (1.0 - config.reallocate_intrinsic_share)
        else:
            w_intrinsic += missing
    used = w_intrinsic + w_commercial + w_market + w_expiry
    effective = Weights(
        intrinsic=w_intrinsic / used,
        commercial=w_commercial / used,
        market=w_market / used,
        expiry=w_expiry / used,
    )
    ratio = min(1.0, available / config.coverage_floor)
    return Weighting(
        effective=effective,
        available=available,
        reallocated=reallocated,
        ratio=ratio,
        score_threshold=config.score_threshold_base + config.score_threshold_span * ratio,
        confidence_threshold=(
            config.confidence_threshold_base + config.confidence_threshold_span * ratio
        ),
    )


def weighted_score(
    effective: Weights,
    intrinsic: float,
    commercial: float | None,
    market: float | None,
    expiry: float | None,
) -> float:
    return (
        effective.intrinsic * intrinsic
        + effective.commercial * (commercial or 0.0)
        + effective.market * (market or 0.0)
        + effective.expiry * (expiry or 0.0)
    )
