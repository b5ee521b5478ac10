"""Verdict tables for the three DROP_METHODs. Every expectation is worked out by hand from the
issue's formulas with the scoring defaults (commission 0.20, annual sell-through 0.01,
confidence cap 0.8, so P(sale in a year) = 0.01 × confidence / 0.8) and DROP_SCORE_THRESHOLD 25,
DROP_RENEWAL_HORIZON_DAYS 60; "now" is 2030-01-01 12:00 UTC."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from dominus.portfolio.model import TrademarkRisk, trademark_risk
from dominus.portfolio.settings import DropMethod
from dominus.portfolio.verdicts import VerdictFacts, VerdictRules, judge, money_words, npv

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def rules(method: DropMethod) -> VerdictRules:
    return VerdictRules(
        method=method,
        score_threshold=25,
        horizon_days=60,
        currency="USD",
        sale_commission=0.20,
        annual_sell_through=0.01,
        confidence_cap=0.8,
    )


def facts(days: int, **values: object) -> VerdictFacts:
    base = VerdictFacts(
        domain="example.com",
        renewal_date=date(2030, 1, 1) + timedelta(days=days),
        currency="USD",
        acquisition_cost=None,
        renewal_cost=50.0,
        renewals_paid=0.0,
        current_score=50.0,
        expected_value=1000.0,
        confidence=0.8,
        list_price=None,
        suggested_list_price=None,
    )
    return replace(base, **values)  # type: ignore[arg-type]


def test_a_name_listed_at_its_suggested_price_is_not_overpriced() -> None:
    # list multiplier 4: the suggestion may be 4 × EV, so the ceiling is 4 × EV, not 2.5 ×
    higher = replace(rules("expected"), list_multiplier=4.0)
    at_suggested = facts(200, list_price=4_000.0, suggested_list_price=4_000.0)
    assert judge(at_suggested, higher, NOW).verdict == "keep"
    above = facts(200, list_price=4_100.0, suggested_list_price=4_000.0)
    assert judge(above, higher, NOW).reason == (
        "listed at $4,100, above 4 × EV $1,000 ($4,000): reprice to the suggested $4,000"
    )


def test_a_suggestion_above_the_asking_price_is_not_offered_as_a_reprice() -> None:
    # An entry scored under an older rule may hold a suggestion above its asking price: a
    # reprice "to" a higher price would contradict the reason it is given.
    entry = facts(200, list_price=40_000.0, suggested_list_price=162_000.0)
    assert judge(entry, rules("expected"), NOW).reason == (
        "listed at $40,000, above 2.5 × EV $1,000 ($2,500): reprice"
    )


# --- expected ------------------------------------------------------------------------------
# EV 1000, confidence 0.8: P = 0.01 × 0.8 / 0.8 = 0.01; value = 1000 × 0.80 × 0.01 = $8.
EXPECTED_TABLE = [
    ("renewal $50 vs $8 within horizon", facts(30), "drop",
     "renewal $50 > expected sale value $8 this year"),
    ("EV 10000: $80 > $10", facts(30, expected_value=10000.0, renewal_cost=10.0), "keep",
     "expected sale value $80 this year > renewal $10"),
    # 6250 × 0.8 × 0.01 = 50: not more than the renewal, so drop
    ("equal is not enough", facts(30, expected_value=6250.0), "drop",
     "renewal $50 = expected sale value $50 this year"),
    ("beyond the horizon", facts(200), "keep", "beyond the 60-day horizon"),
    ("day 60 is within", facts(60), "drop", "renewal in 60 days"),
    ("day 61 is beyond", facts(61), "keep", "renewal in 61 days, beyond"),
    ("past due is within", facts(-3), "drop", "renewal 3 days past due"),
    ("sunk cost never keeps", facts(30, acquisition_cost=100000.0), "drop",
     "the $100,000 paid for it is sunk"),
    # 2.5 × 1000 = 2500 < 2600
    ("listed above 2.5 × EV", facts(200, list_price=2600.0, suggested_list_price=1500.0),
     "reprice",
     "listed at $2,600, above 2.5 × EV $1,000 ($2,500): reprice to the suggested $1,500"),
    ("listed at exactly 2.5 × EV", facts(200, list_price=2500.0), "keep", "beyond"),
    ("overpriced but worth renewing", facts(30, expected_value=10000.0, renewal_cost=10.0,
     list_price=30000.0), "reprice", "above 2.5 × EV $10,000 ($25,000)"),
    ("overpriced and not worth renewing: drop first", facts(30, list_price=9000.0), "drop",
     "renewal $50 > expected sale value $8"),
    ("renewal cost unknown", facts(30, renewal_cost=None), "reprice", "renewal cost is unknown"),
    ("not scored", facts(30, current_score=None, expected_value=None, confidence=None),
     "reprice", "not scored"),
    ("other currency", facts(30, currency="EUR"), "reprice", "never converted"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "entry", "verdict", "words"), EXPECTED_TABLE, ids=[row[0] for row in EXPECTED_TABLE]
)
def test_expected_method(case: str, entry: VerdictFacts, verdict: str, words: str) -> None:
    judgement = judge(entry, rules("expected"), NOW)
    assert judgement.verdict == verdict
    assert words in judgement.reason


def test_expected_method_states_the_workings() -> None:
    # confidence 0.4: P = 0.01 × 0.4 / 0.8 = 0.5 %; 1000 × 0.8 × 0.005 = $4
    judgement = judge(facts(10, confidence=0.4), rules("expected"), NOW)
    assert judgement.reason == (
        "renewal $50 > expected sale value $4 this year (EV $1,000 × 0.80 × P(sale in a year) "
        "0.50 %; renewal in 10 days)"
    )


# --- threshold -----------------------------------------------------------------------------
THRESHOLD_TABLE = [
    ("low score, cost recouped", facts(30, current_score=20.0, acquisition_cost=10.0,
     renewals_paid=20.0), "drop", "score 20 below 25 with renewal in 30 days"),
    ("low score, recouped exactly", facts(30, current_score=20.0, acquisition_cost=20.0,
     renewals_paid=20.0), "drop", "recouped by the $20 paid in renewals"),
    ("low score, cost not recouped", facts(30, current_score=20.0, acquisition_cost=500.0,
     renewals_paid=20.0), "reprice", "$500 acquisition cost is not yet recouped by the $20"),
    ("low score, acquisition unknown", facts(30, current_score=20.0), "reprice",
     "acquisition cost is unknown"),
    ("low score beyond the horizon", facts(100, current_score=20.0, acquisition_cost=0.0),
     "keep", "beyond the 60-day horizon"),
    ("listed within 3 × horizon", facts(150, list_price=900.0, suggested_list_price=700.0),
     "reprice",
     "within 3 × the 60-day horizon) and score 50 ≥ 25: reprice to the suggested $700"),
    ("listed at day 180", facts(180, list_price=900.0), "reprice", "renewal in 180 days"),
    ("listed at day 181", facts(181, list_price=900.0), "keep", "score 50 ≥ 25"),
    ("listed with score exactly 25", facts(30, current_score=25.0, list_price=900.0),
     "reprice", "score 25 ≥ 25"),
    ("listed with a low score beyond the horizon", facts(100, current_score=20.0,
     list_price=900.0), "keep", "below 25"),
    ("unlisted, good score", facts(30), "keep", "score 50 ≥ 25; renewal in 30 days"),
    ("not scored", facts(30, current_score=None, expected_value=None, confidence=None),
     "reprice", "not scored"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "entry", "verdict", "words"), THRESHOLD_TABLE, ids=[row[0] for row in THRESHOLD_TABLE]
)
def test_threshold_method(case: str, entry: VerdictFacts, verdict: str, words: str) -> None:
    judgement = judge(entry, rules("threshold"), NOW)
    assert judgement.verdict == verdict
    assert words in judgement.reason


# --- npv -----------------------------------------------------------------------------------
ANNUITY = 1 / 1.05 + 1 / 1.05**2 + 1 / 1.05**3 + 1 / 1.05**4 + 1 / 1.05**5  # 4.3295


def test_npv_is_the_issues_formula() -> None:
    # EV 100 × 0.5 − renewal 60 = −10 a year; acquisition 10
    entry = facts(30, expected_value=100.0, confidence=0.5, renewal_cost=60.0, acquisition_cost=10)
    assert npv(entry) == pytest.approx(-10 + -10 * ANNUITY)
    assert round(npv(replace(entry, acquisition_cost=None)), 2) == -43.29


NEGATIVE = {"expected_value": 100.0, "confidence": 0.5, "renewal_cost": 60.0}  # −10 a year
POSITIVE = {"expected_value": 100.0, "confidence": 0.5, "renewal_cost": 10.0}  # +40 a year

NPV_TABLE = [
    # −43.29, no acquisition cost: drop even with a good score
    ("negative within, nothing paid", facts(30, current_score=30.0, acquisition_cost=0.0,
     **NEGATIVE), "drop", "NPV −$43.29 over 5 years at 5 %"),
    # −10 − 43.29 = −53.29; score 30 ≥ 25 and it cost $10
    ("negative within, good score, cost paid", facts(30, current_score=30.0,
     acquisition_cost=10.0, **NEGATIVE), "reprice", "NPV −$53.29"),
    ("negative within, low score, cost paid", facts(30, current_score=20.0,
     acquisition_cost=10.0, **NEGATIVE), "drop", "NPV −$53.29"),
    ("negative beyond the horizon", facts(100, current_score=30.0, acquisition_cost=0.0,
     **NEGATIVE), "reprice", "beyond the 60-day horizon"),
    # 40 × 4.3295 = 173.18; − 100 = 73.18
    ("positive", facts(30, current_score=30.0, acquisition_cost=100.0, **POSITIVE), "keep",
     "NPV $73.18"),
    ("positive, low score within", facts(30, current_score=20.0, acquisition_cost=100.0,
     **POSITIVE), "reprice", "score 20 below 25"),
    ("positive, low score beyond", facts(100, current_score=20.0, acquisition_cost=100.0,
     **POSITIVE), "keep", "NPV $73.18"),
    ("acquisition unknown counts as 0", facts(30, current_score=30.0, **NEGATIVE), "drop",
     "acquisition unknown, counted as $0"),
    ("renewal cost unknown", facts(30, renewal_cost=None), "reprice", "renewal cost is unknown"),
    ("not scored", facts(30, current_score=None, expected_value=None, confidence=None),
     "reprice", "not scored"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "entry", "verdict", "words"), NPV_TABLE, ids=[row[0] for row in NPV_TABLE]
)
def test_npv_method(case: str, entry: VerdictFacts, verdict: str, words: str) -> None:
    judgement = judge(entry, rules("npv"), NOW)
    assert judgement.verdict == verdict
    assert words in judgement.reason


@pytest.mark.parametrize(
    ("value", "currency", "words"),
    [(50, "USD", "$50"), (12.345, "USD", "$12.35"), (-21.4, "USD", "−$21.40"),
     (1250, "EUR", "EUR 1,250")],
)  # fmt: skip
def test_money_words(value: float, currency: str, words: str) -> None:
    assert money_words(value, currency) == words


# --- trademark risk ------------------------------------------------------------------------
CHATGPT = TrademarkRisk("chatgpt", "substring")
TRADEMARK_CASES = [
    ("expected", facts(30)),  # drop
    ("expected", facts(200)),  # keep
    ("threshold", facts(150, list_price=900.0)),  # reprice
    ("npv", facts(30, current_score=30.0, acquisition_cost=100.0, **POSITIVE)),  # keep
    ("expected", facts(30, current_score=None, expected_value=None, confidence=None)),
]


@pytest.mark.parametrize(("method", "entry"), TRADEMARK_CASES)
def test_a_trademark_match_is_said_first_and_leaves_the_verdict(
    method: DropMethod, entry: VerdictFacts
) -> None:
    plain = judge(entry, rules(method), NOW)
    flagged = judge(replace(entry, trademark=CHATGPT), rules(method), NOW)
    assert flagged.verdict == plain.verdict
    assert flagged.reason == f"UDRP risk: matches mark 'chatgpt' (rule: substring) · {plain.reason}"


def test_the_risk_is_read_from_the_gate_in_the_score_details() -> None:
    gate = {"checked": True, "verdict": "blocked", "mark": "ChatGPT", "rule": "exact"}
    assert trademark_risk({"trademark": gate}) == TrademarkRisk("ChatGPT", "exact")
    for cleared in ("clear", "unverified"):
        details = {"trademark": {**gate, "verdict": cleared, "mark": None, "rule": None}}
        assert trademark_risk(details) is None
    assert trademark_risk(None) is None
    assert trademark_risk({"tier": "speculative"}) is None
    assert trademark_risk({"trademark": {**gate, "rule": None}}) == TrademarkRisk(
        "ChatGPT", "match"
    )
