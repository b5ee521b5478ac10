"""Combining the four signals into one score, a recommendation test and money values.

Weights are relative: they are divided by their sum first, so below "weight" means a share of 1.

Available weight (= coverage). The sum of the shares of the signals that are available, the market
share counted at share × density (thin market data only half-counts). Intrinsic is always
available. With the default weights and full data it is 1.0; with no market and no expiry, 0.65.

Reallocation. When the available weight is below the coverage floor (0.70), the missing weight
(1 − available weight, i.e. the unavailable shares plus the market's density shortfall) is moved:
60 % to intrinsic and 40 % to expiry when expiry is available, all to intrinsic otherwise. At or
above the floor nothing moves. The effective weights are then normalised to sum to 1, and

    weighted score = Σ effective weight × signal          (a weighted average, in [0, 1])

Thresholds. ratio = min(1, available weight / 0.70); recommend when
    weighted score ≥ 0.20 + 0.20·ratio   and   confidence ≥ 0.18 + 0.12·ratio,
and confidence is the issue 10 reference formula (see confidence.py): 0.20 with only the intrinsic
signal, rising with the share of the other signals that have data, capped at 0.8.

Values (money rounded to cents):
    anchor      = 500 + (max(500, median) − 500)·min(1, density·3)     (500 without market data)
    EV          = weighted score × anchor
    buy max     = max(0, EV·0.5 − 3·renewal cost)                      (EV·0.5 when unknown)
    list price  = EV·2.5
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from dominus.providers.models import ComparableSale, ExpiryFacts, KeywordStats
from dominus.scoring.commercial import commercial_score
from dominus.scoring.confidence import Coverage, confidence
from dominus.scoring.config import ScoringConfig
from dominus.scoring.expiry import expiry_score
from dominus.scoring.intrinsic import intrinsic_score
from dominus.scoring.market import market_signal
from dominus.scoring.weights import Weights


@dataclass(frozen=True)
class ScoringInput:
    domain: str  # normalised ASCII / punycode, e.g. "cloudnest.com"
    keyword: KeywordStats | None = None
    comparables: Sequence[ComparableSale] = ()  # already filtered by relevant_comparables
    expiry: ExpiryFacts | None = None  # None: not from a closeout list
    renewal_cost: float | None = None  # per year, in config.currency; None: unknown


@dataclass(frozen=True)
class Score:
    domain: str
    intrinsic: float
    commercial: float | None  # None: signal unavailable
    market: float | None
    expiry: float | None
    effective_weights: Weights  # after density, reallocation and normalisation (sum 1)
    available_weight: float  # = coverage, in [0, 1]
    coverage_ratio: float  # min(1, available_weight / coverage_floor)
    reallocated: bool
    weighted_score: float
    confidence: float
    score_threshold: float
    confidence_threshold: float
    meets_thresholds: bool
    market_median: float | None
    market_density: float
    market_sales: int
    market_ignored_currency: int
    market_ignored_invalid: int
    anchor: float
    expected_value: float
    suggested_buy_max: float
    suggested_list_price: float
    currency: str = field(default="USD")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: str, float, int, bool, None and a nested dict of the effective weights."""
        return {
            "domain": self.domain,
            "signals": {
                "intrinsic": self.intrinsic,
                "commercial": self.commercial,
                "market": self.market,
                "expiry": self.expiry,
            },
            "effective_weights": self.effective_weights.to_dict(),
            "available_weight": self.available_weight,
            "coverage_ratio": self.coverage_ratio,
            "reallocated": self.reallocated,
            "weighted_score": self.weighted_score,
            "confidence": self.confidence,
            "score_threshold": self.score_threshold,
            "confidence_threshold": self.confidence_threshold,
            "meets_thresholds": self.meets_thresholds,
            "market": {
                "median": self.market_median,
                "density": self.market_density,
                "sales": self.market_sales,
                "ignored_currency": self.market_ignored_currency,
                "ignored_invalid": self.market_ignored_invalid,
            },
            "currency": self.currency,
            "anchor": self.anchor,
            "expected_value": self.expected_value,
            "suggested_buy_max": self.suggested_buy_max,
            "suggested_list_price": self.suggested_list_price,
        }


def _cents(value: float) -> float:
    return round(value, 2)


def score_domain(
    inputs: ScoringInput, weights: Weights, config: ScoringConfig, today: date
) -> Score:
    """Score one candidate; pure (no I/O, no clock). See the module docstring for the formulas."""
    total = weights.validate().total
    intrinsic = intrinsic_score(inputs.domain, config)
    commercial = commercial_score(inputs.keyword, config)
    market = market_signal(inputs.comparables, today, config)
    expiry = expiry_score(inputs.expiry, config)

    w_intrinsic = weights.intrinsic / total
    w_commercial = weights.commercial / total if commercial is not None else 0.0
    w_market = weights.market / total * market.density if market.score is not None else 0.0
    w_expiry = weights.expiry / total if expiry is not None else 0.0
    available = w_intrinsic + w_commercial + w_market + w_expiry

    reallocated = available < config.coverage_floor
    if reallocated:
        missing = 1.0 - available
        if expiry is not None:
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
    weighted = (
        effective.intrinsic * intrinsic
        + effective.commercial * (commercial or 0.0)
        + effective.market * (market.score or 0.0)
        + effective.expiry * (expiry or 0.0)
    )

    ratio = min(1.0, available / config.coverage_floor)
    shares = Weights(
        intrinsic=weights.intrinsic / total,
        commercial=weights.commercial / total,
        market=weights.market / total,
        expiry=weights.expiry / total,
    )
    coverage = Coverage(
        commercial=commercial is not None,
        market=market.score is not None,
        expiry=expiry is not None,
    )
    certainty = confidence(shares, coverage, intrinsic, config)
    score_threshold = config.score_threshold_base + config.score_threshold_span * ratio
    confidence_threshold = (
        config.confidence_threshold_base + config.confidence_threshold_span * ratio
    )

    anchor = config.anchor_floor
    if market.median is not None:
        anchor += (max(config.anchor_floor, market.median) - config.anchor_floor) * min(
            1.0, market.density * config.anchor_density_factor
        )
    expected = weighted * anchor
    buy_max = expected * config.buy_fraction
    if inputs.renewal_cost is not None:
        buy_max -= config.renewal_years * max(0.0, inputs.renewal_cost)
    return Score(
        domain=inputs.domain,
        intrinsic=intrinsic,
        commercial=commercial,
        market=market.score,
        expiry=expiry,
        effective_weights=effective,
        available_weight=available,
        coverage_ratio=ratio,
        reallocated=reallocated,
        weighted_score=weighted,
        confidence=certainty.value,
        score_threshold=score_threshold,
        confidence_threshold=confidence_threshold,
        meets_thresholds=weighted >= score_threshold and certainty.value >= confidence_threshold,
        market_median=market.median,
        market_density=market.density,
        market_sales=market.sales,
        market_ignored_currency=market.ignored_currency,
        market_ignored_invalid=market.ignored_invalid,
        anchor=_cents(anchor),
        expected_value=_cents(expected),
        suggested_buy_max=_cents(max(0.0, buy_max)),
        suggested_list_price=_cents(expected * config.list_multiplier),
        currency=config.currency,
    )
