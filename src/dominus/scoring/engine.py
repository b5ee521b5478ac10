"""Scoring one candidate: its four signals, their weighting, confidence and values.

    signals      intrinsic.py, commercial.py, market.py (+ comparables.py), expiry.py
    weighting    weighting.py: available weight, reallocation, weighted score, thresholds
    confidence   confidence.py: the issue 10 reference formula
    values       value.py: anchor and EV = weighted score × anchor

    buy max      = max(0, EV·0.5 − 3·renewal cost)                      (EV·0.5 when unknown)
    list price   = EV·2.5
Money is rounded to cents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from dominus.providers.models import ComparableSale, ExpiryFacts, KeywordStats
from dominus.scoring.commercial import commercial_score
from dominus.scoring.comparables import market_signal
from dominus.scoring.confidence import Coverage, confidence
from dominus.scoring.config import ScoringConfig
from dominus.scoring.expiry import expiry_score
from dominus.scoring.intrinsic import intrinsic_score
from dominus.scoring.market import MarketResult
from dominus.scoring.names import split_domain
from dominus.scoring.score import Score
from dominus.scoring.value import anchors
from dominus.scoring.weighting import shares_of, weighted_score, weighting
from dominus.scoring.weights import Weights


@dataclass(frozen=True)
class ScoringInput:
    domain: str  # normalised ASCII / punycode, e.g. "cloudnest.com"
    keyword: KeywordStats | None = None
    # Candidate sales (ComparablesIndex.relevant narrows a large list); the engine applies the
    # relevance rule itself, so any list will do.
    comparables: Sequence[ComparableSale] = ()
    # The market signal already worked out from the comparables (ComparablesIndex.market, the
    # pipeline's way with many candidates); when given, `comparables` is not read.
    market: MarketResult | None = None
    expiry: ExpiryFacts | None = None  # None: not from a closeout list
    renewal_cost: float | None = None  # per year, in config.currency; None: unknown


def _cents(value: float) -> float:
    return round(value, 2)


def score_domain(
    inputs: ScoringInput, weights: Weights, config: ScoringConfig, today: date
) -> Score:
    """Score one candidate; pure (no I/O, no clock). See the module docstrings for the formulas."""
    shares = shares_of(weights)
    intrinsic = intrinsic_score(inputs.domain, config)
    commercial = commercial_score(inputs.keyword, config)
    market = inputs.market or market_signal(inputs.domain, inputs.comparables, today, config)
    expiry = expiry_score(inputs.expiry, config)
    coverage = Coverage(
        commercial=commercial is not None, market=market.evidence, expiry=expiry is not None
    )
    weighed = weighting(shares, coverage, config)
    weighted = weighted_score(weighed.effective, intrinsic, commercial, market.score, expiry)
    certainty = confidence(shares, coverage, intrinsic, config)
    _, suffix = split_domain(inputs.domain)
    value = anchors(
        shares, market.statistic, commercial, expiry, config.tld_multiplier(suffix), config
    )
    expected = weighted * value.anchor
    buy_max = expected * config.buy_fraction
    if inputs.renewal_cost is not None:
        buy_max -= config.renewal_years * max(0.0, inputs.renewal_cost)
    return Score(
        domain=inputs.domain,
        intrinsic=intrinsic,
        commercial=commercial,
        market=market.score,
        expiry=expiry,
        effective_weights=weighed.effective,
        available_weight=weighed.available,
        coverage_ratio=weighed.ratio,
        reallocated=weighed.reallocated,
        weighted_score=weighted,
        confidence=certainty.value,
        confidence_detail=certainty,
        score_threshold=weighed.score_threshold,
        confidence_threshold=weighed.confidence_threshold,
        meets_thresholds=weighted >= weighed.score_threshold
        and certainty.value >= weighed.confidence_threshold,
        market_detail=market,
        anchors=value,
        anchor=_cents(value.anchor),
        expected_value=_cents(expected),
        suggested_buy_max=_cents(max(0.0, buy_max)),
        suggested_list_price=_cents(expected * config.list_multiplier),
        currency=config.currency,
    )
