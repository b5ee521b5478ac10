"""Confidence: how far the evidence behind a score reaches beyond the name itself.

With the weights normalised to shares of 1 (w_intrinsic, w_commercial, w_market, w_expiry):

    covered      = w_intrinsic + [w_commercial if commercial] + [w_market if market]
                   + [w_expiry if expiry]
    extra        = max(0, covered − w_intrinsic)
    signalConf   = extra / (1 − w_intrinsic) × (cap − base) × (1 − qualityShare)
    qualityBoost = intrinsic × qualityShare × qualityFactor   if extra > 0, else 0
    confidence   = min(cap, base + signalConf + qualityBoost)

With the default weights and constants this is the issue's reference, written there with the
numbers: w_intrinsic 0.30 (so 1 − w_intrinsic = 0.70), base 0.2, cap 0.8, quality share 0.12 and
quality factor 0.6. The intrinsic signal is always there, so it never raises confidence by itself:
a name with no keyword, market or expiry evidence has confidence `base` (0.20).

If every weight sits on intrinsic (1 − w_intrinsic = 0) no other signal can cover anything, so
extra is 0 and the formula's division never happens.
"""

from __future__ import annotations

from dataclasses import dataclass

from dominus.scoring.config import ScoringConfig
from dominus.scoring.weights import Weights


@dataclass(frozen=True)
class Coverage:
    """Which signals beyond intrinsic have evidence behind them."""

    commercial: bool = False
    market: bool = False
    expiry: bool = False


@dataclass(frozen=True)
class Confidence:
    covered: float  # the shares of the covered signals, intrinsic included, in [0, 1]
    extra: float  # covered − intrinsic share
    signal_part: float  # signalConf
    quality_part: float  # qualityBoost
    value: float  # the confidence

    def to_dict(self) -> dict[str, float]:
        return {
            "covered": self.covered,
            "extra": self.extra,
            "signal_part": self.signal_part,
            "quality_part": self.quality_part,
        }


def covered_share(shares: Weights, coverage: Coverage) -> float:
    """`covered` of the formula; `shares` must already be normalised (sum 1)."""
    return (
        shares.intrinsic
        + (shares.commercial if coverage.commercial else 0.0)
        + (shares.market if coverage.market else 0.0)
        + (shares.expiry if coverage.expiry else 0.0)
    )


def confidence(
    shares: Weights, coverage: Coverage, intrinsic: float, config: ScoringConfig
) -> Confidence:
    """The confidence of a score whose weights (normalised) are `shares`; pure."""
    covered = covered_share(shares, coverage)
    extra = max(0.0, covered - shares.intrinsic)
    beyond_intrinsic = 1.0 - shares.intrinsic
    signal_part = 0.0
    if extra > 0 and beyond_intrinsic > 0:
        signal_part = (
            extra
            / beyond_intrinsic
            * (config.confidence_cap - config.confidence_base)
            * (1.0 - config.confidence_quality_share)
        )
    quality_part = (
        intrinsic * config.confidence_quality_share * config.confidence_quality_factor
        if extra > 0
        else 0.0
    )
    value = min(config.confidence_cap, config.confidence_base + signal_part + quality_part)
    return Confidence(covered, extra, signal_part, quality_part, value)
