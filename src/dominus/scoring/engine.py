"""Scoring one candidate: its signals, their weighting, confidence, values and the decision.

    signals      intrinsic.py, commercial.py, comparables.py + market.py, expiry.py
    weighting    weighting.py: available weight, reallocation, weighted score, thresholds
    confidence   confidence.py: the reference formula (ADR 0014)
    values       the value model's appraisal when given (valuation/): EV = retail P50, list
                 price = EV × 2.5 within retail P50–P90, the buy max held against wholesale
                 P50; without one, value.py: anchor, EV = weighted score × anchor, list
                 price = EV × 2.5
    money        money.py: holding cost, P(sale), expected profit, buy max
    decision     decision.py: evidence and gates → recommended / speculative / rejected + reason

Pure: no I/O, no clock (the caller passes `today`; the price table travels in the config).
Money is rounded to cents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from dominus.domain_names import split_domain
from dominus.providers.models import ComparableSale, ExpiryFacts, KeywordStats
from dominus.scoring.commercial import commercial_score
from dominus.scoring.comparables import market_signal
from dominus.scoring.confidence import Coverage, confidence
from dominus.scoring.config import ScoringConfig
from dominus.scoring.decision import Evidence, Figures, decide
from dominus.scoring.expiry import expiry_score
from dominus.scoring.intrinsic import intrinsic_score
from dominus.scoring.market import MarketResult
from dominus.scoring.money import Acquisition, money
from dominus.scoring.score import Score
from dominus.scoring.value import anchors
from dominus.scoring.weighting import shares_of, weighted_score, weighting
from dominus.scoring.weights import Weights
from dominus.valuation import Appraisal


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
    # Per year, in config.currency; replaces the price table's renewal (None: use the table).
    renewal_cost: float | None = None
    acquisition_price: float | None = None  # a closeout/auction listing's price
    purchase: bool = False  # True: bought from a listing (closeout/auction), not hand-registered
    # The value model's appraisal of the name (in US dollars); None: the anchor formula's EV.
    value: Appraisal | None = None


def _cents(value: float) -> float:
    return round(value, 2)


def suggested_list_price(expected: float, valued: Appraisal | None, multiplier: float) -> float:
    """EV × the list multiplier; with the value model, kept within its retail P50 to P90. Not
    the P90 itself: for a name with little evidence the P90 is tens of times the P50 (the range
    is honest about what is unknown), and a price that far above EV is one the portfolio's own
    verdict calls overpriced."""
    if valued is None:
        return expected * multiplier
    retail = valued.retail
    return min(retail.p90, max(retail.p50, retail.p50 * multiplier))


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
    valued = inputs.value if inputs.value is not None and config.currency == "USD" else None
    expected = _cents(valued.retail.p50 if valued else weighted * value.anchor)
    list_price = _cents(suggested_list_price(expected, valued, config.list_multiplier))
    acquisition = Acquisition(
        domain=inputs.domain,
        purchase=inputs.purchase,
        listed_price=inputs.acquisition_price,
        renewal_cost=inputs.renewal_cost,
    )
    figures = money(
        acquisition,
        expected,
        certainty.value,
        config,
        wholesale_p50=valued.wholesale.p50 if valued else None,
    )
    evidence = Evidence(
        keyword=inputs.keyword,
        keyword_counts=coverage.commercial,
        min_search_volume=config.min_search_volume,
        expiry=inputs.expiry,
        expiry_counts=coverage.expiry,
        relevant_sales=market.relevant,
        required_sales=config.min_comparables,
    )
    decision = decide(
        evidence,
        Figures(
            confidence=certainty.value,
            confidence_threshold=weighed.confidence_threshold,
            weighted_score=weighted,
            score_threshold=weighed.score_threshold,
            expected_value=expected,
            currency=config.currency,
        ),
        figures,
    )
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
        tier=decision.tier,
        tier_reason=decision.reason,
        gates=decision.gates,
        evidence=evidence,
        market_detail=market,
        anchors=value,
        anchor=_cents(value.anchor),
        expected_value=expected,
        money=figures,
        suggested_buy_max=figures.buy_max,
        suggested_list_price=list_price,
        currency=config.currency,
        value=valued,
    )
