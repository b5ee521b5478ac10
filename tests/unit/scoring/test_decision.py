"""The decision: every gate, the three tiers and the reason in words."""

from __future__ import annotations

import json
from datetime import date

import pytest

from dominus.providers.models import ComparableSale, ExpiryFacts, KeywordStats
from dominus.scoring import ScoringConfig, ScoringInput, Weights, score_domain
from dominus.scoring.decision import Evidence, Figures, Tier, amount, decide
from dominus.scoring.money import NO_LISTED_PRICE, Acquisition, money

CONFIG = ScoringConfig()
TODAY = date(2026, 11, 30)
BUNDLED = CONFIG.prices.source

KEYWORD = KeywordStats("home gym", 33_100, 1.25)
NO_EVIDENCE = Evidence(None, False, 1000, None, False, 0, 3)
KEYWORD_EVIDENCE = Evidence(KEYWORD, True, 1000, None, False, 1, 3)


def figures(confidence: float = 0.6, score: float = 0.6, ev: float = 5000.0) -> Figures:
    return Figures(
        confidence=confidence,
        confidence_threshold=0.3,
        weighted_score=score,
        score_threshold=0.4,
        expected_value=ev,
        currency="USD",
    )


def test_every_gate_passing_is_recommended() -> None:
    ev = 5000.0
    decision = decide(
        KEYWORD_EVIDENCE, figures(ev=ev), money(Acquisition("x.com"), ev, 0.6, CONFIG)
    )
    assert decision.tier is Tier.RECOMMENDED and decision.recommended
    # profit: 5,000 × 0.8 × (1 − 0.9925³) − 31.38 = 89.33 − 31.38 = 57.95
    assert decision.reason == (
        "every gate passes: evidence: keyword 33,100 searches/month, CPC $1.25; "
        "confidence 0.60 ≥ 0.30; score 0.60 ≥ 0.40; "
        "expected profit $57.95: EV $5,000.00 × 0.80 × P(sale 3 y) 2.23 % − holding $31.38"
    )


@pytest.mark.parametrize(
    ("evidence", "fig", "failed", "reason"),
    [
        (
            KEYWORD_EVIDENCE,
            figures(confidence=0.25),
            ["confidence"],
            "confidence 0.25 below its threshold 0.30",
        ),
        (KEYWORD_EVIDENCE, figures(score=0.35), ["score"], "score 0.35 below its threshold 0.40"),
        # the example figures: EV 310, confidence at the cap (P 2.97 %):
        # 310 × 0.8 × 0.029701 − 31.38 = 7.37 − 31.38 = −24.01
        (
            KEYWORD_EVIDENCE,
            figures(confidence=0.8, ev=310.0),
            ["money"],
            "expected profit −$24.01: EV $310.00 × 0.80 × P(sale 3 y) 2.97 % − holding $31.38",
        ),
    ],
)
def test_evidence_with_a_failed_gate_is_rejected(
    evidence: Evidence, fig: Figures, failed: list[str], reason: str
) -> None:
    decision = decide(
        evidence, fig, money(Acquisition("x.com"), fig.expected_value, fig.confidence, CONFIG)
    )
    assert decision.tier is Tier.REJECTED
    assert [gate for gate, passed in decision.gates.items() if not passed] == failed
    assert decision.reason == reason


def test_no_evidence_is_speculative_whatever_the_figures() -> None:
    decision = decide(NO_EVIDENCE, figures(), money(Acquisition("x.com"), 5000.0, 0.6, CONFIG))
    assert decision.tier is Tier.SPECULATIVE
    assert decision.gates == {"evidence": False, "confidence": True, "score": True, "money": True}
    assert decision.reason == (
        "only the intrinsic signal (no keyword data, 0 of 3 comparable sales, no expiry facts)"
    )


@pytest.mark.parametrize(
    ("evidence", "words"),
    [
        # below the volume minimum, no CPC: shown, but not evidence
        (
            Evidence(KeywordStats("x", 400, 0.0), False, 1000, None, False, 2, 3),
            "keyword 400 searches/month, CPC $0.00 (under 1,000 and no CPC), "
            "2 of 3 comparable sales, no expiry facts",
        ),
        (
            Evidence(None, False, 1000, ExpiryFacts(), False, 1, 3),
            "no keyword data, 1 of 3 comparable sales, no expiry facts",
        ),
    ],
)
def test_the_speculative_reason_lists_what_was_seen(evidence: Evidence, words: str) -> None:
    decision = decide(evidence, figures(), money(Acquisition("x.com"), 5000.0, 0.6, CONFIG))
    assert decision.reason == f"only the intrinsic signal ({words})"


@pytest.mark.parametrize(
    ("evidence", "phrase"),
    [
        (Evidence(None, False, 1000, None, False, 4, 3), "evidence: 4 comparable sales"),
        (
            Evidence(None, False, 1000, ExpiryFacts(18, 1200, None), True, 0, 3),
            "evidence: expiry 18 years old, 1,200 backlinks",
        ),
        (
            Evidence(KeywordStats("k", 0, 0.4), True, 1000, None, False, 3, 3),
            "evidence: keyword 0 searches/month, CPC $0.40, 3 comparable sales",
        ),
    ],
)
def test_each_kind_of_evidence_counts(evidence: Evidence, phrase: str) -> None:
    decision = decide(evidence, figures(), money(Acquisition("x.com"), 5000.0, 0.6, CONFIG))
    assert decision.tier is Tier.RECOMMENDED
    assert decision.reason.startswith(f"every gate passes: {phrase}; ")


def test_a_purchase_without_a_price_cannot_be_recommended() -> None:
    unpriced = money(Acquisition("x.com", purchase=True), 5000.0, 0.6, CONFIG)
    decision = decide(KEYWORD_EVIDENCE, figures(), unpriced)
    assert decision.tier is Tier.REJECTED
    assert decision.reason == NO_LISTED_PRICE == "no listed price: shown with its buy max only"
    assert unpriced.buy_max == 68.62  # still shown: 5,000 × 0.02 − 10.46 × 3
    assert decide(NO_EVIDENCE, figures(), unpriced).tier is Tier.SPECULATIVE


def test_a_tld_without_a_price_cannot_pass_the_money_gate() -> None:
    decision = decide(KEYWORD_EVIDENCE, figures(), money(Acquisition("x.dev"), 5000.0, 0.6, CONFIG))
    assert decision.tier is Tier.REJECTED
    assert decision.reason == f"no price for .dev in {BUNDLED}"


def test_several_failed_gates_are_all_named() -> None:
    fig = figures(confidence=0.25, score=0.35, ev=310.0)
    decision = decide(KEYWORD_EVIDENCE, fig, money(Acquisition("x.com"), 310.0, 0.25, CONFIG))
    assert decision.reason.split("; ")[:2] == [
        "confidence 0.25 below its threshold 0.30",
        "score 0.35 below its threshold 0.40",
    ]
    assert decision.reason.split("; ")[2].startswith("expected profit −$")


@pytest.mark.parametrize(
    ("value", "currency", "text"),
    [(21.4, "USD", "$21.40"), (-21.4, "USD", "−$21.40"), (1234.5, "EUR", "EUR 1,234.50")],
)
def test_amounts(value: float, currency: str, text: str) -> None:
    assert amount(value, currency) == text


def test_through_the_engine_the_three_tiers() -> None:
    speculative = score_domain(ScoringInput("qwrtpsdfghjklzxcvbnm.com"), Weights(), CONFIG, TODAY)
    assert speculative.tier is Tier.SPECULATIVE and not speculative.recommended
    assert speculative.tier_reason.startswith("only the intrinsic signal")
    good = score_domain(ScoringInput("homegym.com", keyword=KEYWORD), Weights(), CONFIG, TODAY)
    assert good.tier is Tier.RECOMMENDED and good.recommended and good.meets_thresholds
    weak_tld = score_domain(ScoringInput("homegym.xyz", keyword=KEYWORD), Weights(), CONFIG, TODAY)
    assert weak_tld.tier is Tier.REJECTED
    assert weak_tld.tier_reason.startswith("expected profit −$")


def test_the_score_document_carries_every_figure() -> None:
    sales = [
        ComparableSale(f"homegym{n}.com", 4000, "USD", date(2026, 1, 1)) for n in ("pro", "hub")
    ]
    result = score_domain(
        ScoringInput(
            "homegym.com",
            keyword=KEYWORD,
            comparables=sales,
            expiry=ExpiryFacts(18, 1200, None),
            purchase=True,
            acquisition_price=80.0,
        ),
        Weights(),
        CONFIG,
        TODAY,
    )
    document = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert document["tier"] == result.tier.value
    assert document["recommended"] is document["meets_thresholds"] is result.recommended
    assert set(document["gates"]) == {"evidence", "confidence", "score", "money"}
    assert document["evidence"]["keyword"] == {
        "keyword": "home gym",
        "monthly_volume": 33_100,
        "cpc": 1.25,
        "counts": True,
    }
    assert document["evidence"]["expiry"]["counts"] is True
    assert document["evidence"]["comparable_sales"] == {
        "relevant": 2,
        "required": 3,
        "counts": False,
    }
    assert [sale["domain"] for sale in document["market"]["sales"]] == [
        "homegymhub.com",
        "homegympro.com",
    ]
    money_figures = document["money"]
    assert money_figures["purchase"] is True
    assert money_figures["acquisition_cost"] == 80.0
    assert money_figures["holding_cost"] == round(80.0 + 10.46 * 3, 2)
    assert money_figures["buy_max"] == document["suggested_buy_max"]
    for key in ("sale_commission", "sell_through_rate", "p_sale", "expected_revenue"):
        assert money_figures[key] is not None
