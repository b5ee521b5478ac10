"""Combining signals: reallocation, thresholds, confidence, values, weights, persistence."""

from __future__ import annotations

import json
import math
from datetime import date
from typing import Any

import pytest

from dominus.providers.models import ComparableSale, ExpiryFacts, KeywordStats
from dominus.scoring import Score, ScoringConfig, ScoringInput, Weights, score_domain

CONFIG = ScoringConfig()
TODAY = date(2025, 6, 15)
NAME = "cloudnest.com"
INTRINSIC = 0.3 * 11 / 13 + 0.35 + 0.35 * 0.6  # 0.813846…, see test_signals
KEYWORD = KeywordStats("cloud nest", 500_000, 10.0)
# commercial: 0.6 × log10(500,001)/6 + 0.4 × log10(11)/log10(51)
#           = 0.6 × 5.698971/6.000000 + 0.4 × 1.041393/1.707570 = 0.5698971 + 0.2439464
COMMERCIAL = 0.813844
FACTS = ExpiryFacts(age_years=10, backlinks=500, wayback_snapshots=250)  # expiry 0.5
# three relevant sales ("cloud", "cloud", "nest": overlap 0.5 each), weights 0.5, 0.35, 0.2:
# total 1.05, a quarter 0.2625 reached by 1000 → statistic 1000, market (1000 − 500)/9500
THIN_MARKET = (
    ComparableSale("cloudbase.com", 1000, "USD", date(2025, 1, 1)),
    ComparableSale("cloudbox.com", 3000, "USD", date(2024, 1, 1)),
    ComparableSale("birdnest.com", 6000, "USD", date(2022, 1, 1)),
)
# twenty recent sales at 5250: statistic 5250 (market 0.5)
FULL_MARKET = tuple(ComparableSale("cloudx.com", 5250, "USD", TODAY) for _ in range(20))


def run(weights: Weights | None = None, config: ScoringConfig = CONFIG, **kwargs: Any) -> Score:
    return score_domain(ScoringInput(NAME, **kwargs), weights or Weights(), config, TODAY)


@pytest.mark.parametrize(
    ("inputs", "available", "reallocated", "effective", "weighted"),
    [
        # intrinsic only: 0.30 available, the missing 0.70 all goes to intrinsic
        ({}, 0.30, True, (1.0, 0, 0, 0), INTRINSIC),
        # intrinsic + expiry: 0.40; missing 0.60 → intrinsic +0.36, expiry +0.24
        ({"expiry": FACTS}, 0.40, True, (0.66, 0, 0, 0.34), 0.66 * INTRINSIC + 0.34 * 0.5),
        # intrinsic + commercial: 0.65 < 0.70, no expiry → missing 0.35 to intrinsic
        (
            {"keyword": KEYWORD},
            0.65,
            True,
            (0.65, 0.35, 0, 0),
            0.65 * INTRINSIC + 0.35 * COMMERCIAL,
        ),
        # 0.75 ≥ floor: nothing moves, the weights are only normalised by 0.75
        (
            {"keyword": KEYWORD, "expiry": FACTS},
            0.75,
            False,
            (0.4, 0.35 / 0.75, 0, 0.1 / 0.75),
            0.4 * INTRINSIC + 0.35 / 0.75 * COMMERCIAL + 0.1 / 0.75 * 0.5,
        ),
        # three relevant sales are market evidence: 0.30 + 0.35 + 0.25 = 0.90 ≥ floor
        (
            {"keyword": KEYWORD, "comparables": THIN_MARKET},
            0.90,
            False,
            (0.3 / 0.9, 0.35 / 0.9, 0.25 / 0.9, 0),
            (0.3 * INTRINSIC + 0.35 * COMMERCIAL + 0.25 * 500 / 9500) / 0.9,
        ),
        # market without keyword: 0.55, the missing 0.45 goes to intrinsic
        (
            {"comparables": THIN_MARKET},
            0.55,
            True,
            (0.75, 0, 0.25, 0),
            0.75 * INTRINSIC + 0.25 * 500 / 9500,
        ),
        # everything
        (
            {
                "keyword": KeywordStats("k", 1_000_000, 50.0),
                "comparables": FULL_MARKET,
                "expiry": ExpiryFacts(age_years=20, backlinks=1000, wayback_snapshots=500),
            },
            1.0,
            False,
            (0.3, 0.35, 0.25, 0.1),
            0.3 * INTRINSIC + 0.35 + 0.25 * 0.5 + 0.1,
        ),
    ],
)
def test_available_weight_and_reallocation(
    inputs: dict[str, Any],
    available: float,
    reallocated: bool,
    effective: tuple[float, float, float, float],
    weighted: float,
) -> None:
    score = run(**inputs)
    assert score.available_weight == pytest.approx(available)
    assert score.reallocated is reallocated
    w = score.effective_weights
    assert (w.intrinsic, w.commercial, w.market, w.expiry) == pytest.approx(effective)
    assert w.total == pytest.approx(1.0)
    assert score.weighted_score == pytest.approx(weighted)


@pytest.mark.parametrize(
    ("inputs", "score_threshold", "confidence", "confidence_threshold"),
    [
        # confidence: intrinsic only 0.2; + commercial 0.2 + 0.264 + I × 0.072;
        # + commercial and expiry: extra 0.45 → 0.45/0.70 × 0.528 + I × 0.072
        ({}, 0.2 + 0.2 * 0.3 / 0.7, 0.2, 0.18 + 0.12 * 0.3 / 0.7),
        (
            {"keyword": KEYWORD},
            0.2 + 0.2 * 0.65 / 0.7,
            0.2 + 0.264 + INTRINSIC * 0.072,
            0.18 + 0.12 * 0.65 / 0.7,
        ),
        (
            {"keyword": KEYWORD, "expiry": FACTS},
            0.4,
            0.2 + 0.45 / 0.7 * 0.528 + INTRINSIC * 0.072,
            0.3,
        ),  # ratio capped at 1
    ],
)
def test_thresholds_scale_with_coverage(
    inputs: dict[str, Any], score_threshold: float, confidence: float, confidence_threshold: float
) -> None:
    score = run(**inputs)
    assert score.score_threshold == pytest.approx(score_threshold)
    assert score.confidence == pytest.approx(confidence)
    assert score.confidence_threshold == pytest.approx(confidence_threshold)
    assert score.coverage_ratio == pytest.approx(min(1.0, score.available_weight / 0.7))


def test_threshold_gates_both_ways() -> None:
    strong = run(keyword=KEYWORD)
    assert strong.gates["confidence"] and strong.gates["score"]
    assert not run().gates["confidence"]  # confidence 0.2 < 0.18 + 0.12 × 0.3/0.7
    weak = score_domain(ScoringInput("zzqxjkwp-99.xyz"), Weights(), CONFIG, TODAY)
    assert weak.weighted_score == pytest.approx((0.3 * 9 / 13 + 0.35 * 0.45) * 0.4)
    assert not weak.gates["score"]
    # a binding confidence threshold refuses an otherwise good score
    strict = ScoringConfig(confidence_threshold_base=0.5)
    assert not run(config=strict, keyword=KEYWORD).gates["confidence"]


def test_confidence_is_capped() -> None:
    full: dict[str, Any] = {
        "keyword": KEYWORD,
        "comparables": FULL_MARKET,
        "expiry": FACTS,
    }
    # 0.2 + 0.528 + 0.8138 × 0.072 = 0.7866 (below the cap: the full reach needs intrinsic 1)
    assert run(**full).confidence == pytest.approx(0.2 + 0.528 + INTRINSIC * 0.072)
    generous = ScoringConfig(confidence_quality_factor=1.0)  # 0.2 + 0.528 + 0.8138 × 0.12 > 0.8
    assert run(config=generous, **full).confidence == pytest.approx(0.8)
    # a lower cap narrows the span too: 0.2 + (0.7 − 0.2) × 0.88 + 0.8138 × 0.072 = 0.6986
    lower = ScoringConfig(confidence_cap=0.7)
    assert run(config=lower, **full).confidence == pytest.approx(0.2 + 0.44 + INTRINSIC * 0.072)


EV_THIN = round((0.75 * INTRINSIC + 0.25 * 500 / 9500) * 1000, 2)  # 623.54
EV_FULL = round((0.75 * INTRINSIC + 0.25 * 0.5) * 5250, 2)  # 3,860.77


# buy max = max(0, min(EV × 0.02 − carrying cost, 5,000)); carrying cost of a .com hand
# registration: 10.46 + renewal × 2 (31.38 with the table's renewal); list price = EV × 2.5
@pytest.mark.parametrize(
    ("inputs", "anchor", "expected_value", "buy_max", "list_price"),
    [
        # no market: anchor 500; EV = 0.813846 × 500 = 406.92; 8.14 − 31.38 < 0 → 0
        ({}, 500.0, 406.92, 0.0, 1017.30),
        ({"renewal_cost": 10.0}, 500.0, 406.92, 0.0, 1017.30),
        # thin market: the anchor is the market statistic, 1000; 12.47 − 31.38 < 0 → 0
        ({"comparables": THIN_MARKET}, 1000.0, EV_THIN, 0.0, round(EV_THIN * 2.5, 2)),
        # full market: anchor 5250; available 0.55 → intrinsic 0.75, market 0.25;
        # buy max 3,860.77 × 0.02 − (10.46 + 12 × 2) = 77.2154 − 34.46 = 42.76
        (
            {"comparables": FULL_MARKET, "renewal_cost": 12.0},
            5250.0,
            EV_FULL,
            42.76,
            round(EV_FULL * 2.5, 2),
        ),
    ],
)
def test_values(
    inputs: dict[str, Any], anchor: float, expected_value: float, buy_max: float, list_price: float
) -> None:
    score = run(**inputs)
    assert score.anchor == pytest.approx(anchor)
    assert score.expected_value == pytest.approx(expected_value, abs=0.005)
    assert score.suggested_buy_max == pytest.approx(buy_max, abs=0.005)
    assert score.suggested_list_price == pytest.approx(list_price, abs=0.005)
    for money in (score.anchor, score.expected_value, score.suggested_buy_max):
        assert money == round(money, 2)


def test_a_market_statistic_below_the_floor_keeps_the_anchor_at_500() -> None:
    cheap = tuple(ComparableSale("cloudx.com", 100, "USD", TODAY) for _ in range(20))
    score = run(comparables=cheap)
    assert (score.market, score.market_detail.statistic, score.anchor) == (0.0, 100, 500.0)


def test_ignored_currencies_are_reported() -> None:
    sales = (*THIN_MARKET, ComparableSale("cloudkit.com", 9000, "EUR", TODAY))
    score = run(comparables=sales)
    assert (score.market_detail.relevant, score.market_detail.ignored_currency) == (3, 1)
    only_euros = run(comparables=(ComparableSale("cloudkit.com", 9000, "EUR", TODAY),))
    assert only_euros.market is None
    assert only_euros.market_detail.ignored_currency == 1


def test_weights_are_relative() -> None:
    inputs: dict[str, Any] = {"keyword": KEYWORD, "expiry": FACTS, "comparables": THIN_MARKET}
    a = run(**inputs)
    b = run(Weights(intrinsic=3, commercial=3.5, market=2.5, expiry=1), **inputs)
    assert b.weighted_score == pytest.approx(a.weighted_score)
    assert b.available_weight == pytest.approx(a.available_weight)


def test_zero_intrinsic_weight_still_scores() -> None:
    score = run(Weights(intrinsic=0, commercial=1, market=0, expiry=0))
    # commercial unavailable: nothing available, everything moves to intrinsic
    assert score.available_weight == 0.0
    assert score.weighted_score == pytest.approx(INTRINSIC)


def test_to_dict_is_json_safe() -> None:
    score = run(keyword=KEYWORD, comparables=THIN_MARKET, renewal_cost=10.0)
    data = json.loads(json.dumps(score.to_dict(), allow_nan=False))
    assert data["domain"] == NAME
    assert data["signals"]["expiry"] is None
    assert data["signals"]["commercial"] == pytest.approx(COMMERCIAL, abs=1e-6)
    assert data["effective_weights"]["market"] == pytest.approx(score.effective_weights.market)
    market = data["market"]
    assert (market["evidence"], market["relevant_sales"], market["statistic"]) == (True, 3, 1000)
    assert [sale["domain"] for sale in market["sales"]] == [
        "cloudbase.com",
        "cloudbox.com",
        "birdnest.com",
    ]
    assert market["sales"][0] == {
        "domain": "cloudbase.com",
        "price": 1000,
        "adjusted_price": 1000,
        "currency": "USD",
        "date": "2025-01-01",
        "recency": 1.0,
        "overlap": 0.5,
        "shared_words": ["cloud"],
        "weight": 0.5,
    }
    assert data["meets_thresholds"] is score.meets_thresholds
    assert data["currency"] == "USD"


@pytest.mark.parametrize(
    "weights",
    [
        Weights(intrinsic=-0.1),
        Weights(market=math.nan),
        Weights(expiry=math.inf),
        Weights(0, 0, 0, 0),
        Weights(commercial=True),
        Weights(commercial="0.3"),  # type: ignore[arg-type]
    ],
)
def test_invalid_weights_are_refused(weights: Weights) -> None:
    with pytest.raises(ValueError):
        weights.validate()
    with pytest.raises(ValueError):
        score_domain(ScoringInput(NAME), weights, CONFIG, TODAY)


def test_weights_round_trip_through_dicts() -> None:
    weights = Weights(intrinsic=0.4, commercial=0.3, market=0.2, expiry=0.1)
    assert Weights.from_dict(weights.to_dict()) == weights
    assert Weights.from_dict({"market": 0.5}) == Weights(market=0.5)  # others keep defaults
    assert Weights().to_dict() == {
        "intrinsic": 0.30,
        "commercial": 0.35,
        "market": 0.25,
        "expiry": 0.10,
    }
    with pytest.raises(ValueError, match="comercial"):
        Weights.from_dict({"comercial": 0.3})
    with pytest.raises(ValueError):
        Weights.from_dict({"market": -1})


@pytest.mark.parametrize(
    "changes",
    [
        {"volume_cap": 0},
        {"hyphen_penalty": -0.1},
        {"cpc_cap": math.nan},
        {"market_ceiling": 400.0},
        {"reallocate_intrinsic_share": 1.5},
        {"digraphs": ("sh", "ea")},
        {"recency_brackets": ((2, 0.7), (1, 1.0))},
        {"recency_brackets": ((1, -1.0),)},
        {"tld_multipliers": (("com", math.inf),)},
    ],
)
def test_invalid_configs_are_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ScoringConfig(**changes)


def test_config_is_hashable_and_comparable() -> None:
    assert ScoringConfig() == ScoringConfig()
    assert hash(ScoringConfig()) == hash(ScoringConfig())
    assert ScoringConfig(currency="EUR") != ScoringConfig()
