"""Scoring with the value model's appraisal, from the specification's words: `expected_value`
equals retail P50; the suggested list price is within retail P50 to P90 (EV × the list multiplier,
2.5, held within them); a purchase from
a listing is compared with the wholesale P50 (never pay more than investors pay each other unless
the retail case pays for it); the decision stays conservative (no recommendation on the name
alone). Expected figures are worked out by hand in the comments."""

from __future__ import annotations

from datetime import date

from dominus.providers.models import ExpiryFacts
from dominus.scoring import ScoringConfig, ScoringInput, score_domain
from dominus.scoring.decision import Tier
from dominus.scoring.money import Acquisition, money
from dominus.scoring.weights import Weights
from dominus.valuation import Appraisal, Contribution, ModelInfo, Range

TODAY = date(2030, 1, 1)
CONFIG = ScoringConfig()


def appraisal(domain: str, wholesale: Range, retail: Range) -> Appraisal:
    return Appraisal(
        domain=domain,
        wholesale=wholesale,
        retail=retail,
        contributions=[Contribution("one dictionary word", 2_000.0, 2.0)],
        comparables=[],
        model=ModelInfo("test", "1", "hand-made"),
    )


VALUED = appraisal("cloudnest.com", Range(1_000, 2_000, 4_000), Range(3_000, 6_000, 12_000))


def test_the_expected_value_is_the_retail_p50_and_the_list_price_at_most_its_p90() -> None:
    score = score_domain(ScoringInput("cloudnest.com", value=VALUED), Weights(), CONFIG, TODAY)
    assert score.expected_value == 6_000.0
    # 6,000 × 2.5 = 15,000, above the P90: the P90
    assert score.suggested_list_price == 12_000.0
    document = score.to_dict()
    assert document["value"]["retail"] == {"p10": 3_000.0, "p50": 6_000.0, "p90": 12_000.0}
    assert document["value"]["wholesale"] == {"p10": 1_000.0, "p50": 2_000.0, "p90": 4_000.0}
    assert document["value"]["model"] == {"name": "test", "version": "1", "trained_on": "hand-made"}
    assert document["value"]["contributions"][0]["label"] == "one dictionary word"


def test_a_wide_retail_range_lists_at_the_multiplier_not_at_its_p90() -> None:
    # A name with little evidence: P90 36 × its P50. 4,000 × 2.5 = 10,000, inside 4,000–144,000.
    wide = appraisal("homegym.com", Range(300, 600, 1_800), Range(500, 4_000, 144_000))
    score = score_domain(ScoringInput("homegym.com", value=wide), Weights(), CONFIG, TODAY)
    assert score.expected_value == 4_000.0
    assert score.suggested_list_price == 10_000.0


def test_a_list_multiplier_below_one_lists_at_the_retail_p50() -> None:
    # 6,000 × 0.5 = 3,000 is below the P50: never below what an end user typically pays
    config = ScoringConfig(list_multiplier=0.5)
    score = score_domain(ScoringInput("cloudnest.com", value=VALUED), Weights(), config, TODAY)
    assert score.suggested_list_price == 6_000.0


def test_a_name_valued_highly_is_still_not_recommended_on_the_name_alone() -> None:
    """No evidence beyond the name (no keyword, sales or expiry facts): never recommended."""
    rich = appraisal("cloudnest.com", Range(1e5, 2e5, 4e5), Range(3e5, 6e5, 1.2e6))
    score = score_domain(ScoringInput("cloudnest.com", value=rich), Weights(), CONFIG, TODAY)
    assert score.expected_value == 600_000.0
    assert score.tier is not Tier.RECOMMENDED


def test_a_listing_above_the_wholesale_p50_is_said_and_the_buy_max_held_to_it() -> None:
    # .com renewal 10.46 (bundled table); a purchase carries 3 renewals: 31.38.
    # confidence 0.8: r = 0.01, P(sale, 3 y) = 0.029701.
    # revenue = 6,000 × 0.8 × 0.029701 = 142.5648; break-even = 142.56 − 31.38 = 111.18
    # ratio rule: 6,000 × 0.02 − 31.38 = 88.62; held to max(wholesale 2,000, 111.18) = 2,000
    # → buy max 88.62 (the ratio rule is below both)
    figures = money(
        Acquisition("cloudnest.com", purchase=True, listed_price=2_500.0),
        6_000.0,
        0.8,
        CONFIG,
        wholesale_p50=2_000.0,
    )
    assert figures.above_wholesale
    assert figures.buy_max == 88.62
    # wholesale 50: the buy max is held to max(50, 111.18) = 111.18, above the ratio rule's
    # 88.62, so the ratio rule still decides: 88.62
    low = money(
        Acquisition("cloudnest.com", purchase=True, listed_price=60.0),
        6_000.0,
        0.8,
        CONFIG,
        wholesale_p50=50.0,
    )
    assert low.above_wholesale and low.buy_max == 88.62


def test_the_wholesale_p50_caps_a_buy_max_the_retail_case_does_not_pay_for() -> None:
    # confidence 0.1: r = 0.01 × 0.1/0.8 = 0.00125; P(3 y) = 1 − 0.99875³ = 0.0037453145
    # revenue = 60,000 × 0.8 × 0.0037453145 = 179.7751; break-even = 179.7751 − 31.38 = 148.395
    # ratio rule: 60,000 × 0.02 − 31.38 = 1,168.62; wholesale 100: held to max(100, 148.395)
    # → buy max 148.40
    figures = money(
        Acquisition("cloudnest.com", purchase=True, listed_price=500.0),
        60_000.0,
        0.1,
        CONFIG,
        wholesale_p50=100.0,
    )
    assert figures.buy_max == 148.40


def test_with_another_currency_the_dollar_values_are_not_used() -> None:
    euro = ScoringConfig(currency="EUR")
    score = score_domain(
        ScoringInput("cloudnest.com", value=VALUED, expiry=ExpiryFacts(age_years=5)),
        Weights(),
        euro,
        TODAY,
    )
    assert score.value is None
    assert score.expected_value != 6_000.0
