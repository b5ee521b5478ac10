"""Verdicts on held names: keep, drop or reprice, and why, in words (ADR 0021).

Every method first asks whether the name has a score (not scored → reprice: nothing to judge
it by) and whether its costs are in the scoring currency (never converted → reprice). Then:

expected (the default): the scoring issue's money gate applied to one more year.
    value = EV × (1 − commission) × P(sale in the next year),
    P(sale in the next year) = 1 − (1 − r)^1 = r, r = annual sell-through × confidence / cap.
    Within the horizon: renew (keep) only if value > renewal cost, otherwise drop. A name listed
    above 2.5 × EV (or the list multiplier × EV, if higher: a name listed at its suggested price
    is never overpriced) gets reprice (to the suggested list price); outside the horizon keep.
    The acquisition cost is sunk and plays no part.
threshold: score < DROP_SCORE_THRESHOLD within the horizon → drop, but reprice while the
    acquisition cost is not yet recouped by the renewals paid (renewals paid < acquisition); a
    listed name within 3 × the horizon with a score ≥ the threshold → reprice; otherwise keep.
npv: NPV = −acquisition + Σ_{t=1..5} (EV·confidence − renewal) / 1.05^t.
    Negative within the horizon → drop (reprice if score ≥ threshold and acquisition > 0);
    negative outside it → reprice; otherwise keep, unless the score is low within the horizon
    → reprice.

A name the trademark gate blocked at its last appraisal keeps the method's verdict, but its
reason starts with the risk: "UDRP risk: matches mark 'acme' (rule: exact) · ..." (ADR 0043).

"Within the horizon" is `clock.within_horizon`: due in DROP_RENEWAL_HORIZON_DAYS days or fewer,
past due included. Points the issue leaves open are settled conservatively (ADR 0021): a figure
a rule needs but the entry lacks never leads to drop; it leads to reprice (look at this name).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from dominus.portfolio.model import TrademarkRisk, days_until_renewal, within_horizon
from dominus.portfolio.settings import DropMethod

Verdict = Literal["keep", "drop", "reprice"]

LIST_PRICE_EV_RATIO = 2.5  # expected: listed above this × EV → reprice
LISTED_HORIZON_FACTOR = 3  # threshold: a listed name within this × the horizon → reprice
NPV_YEARS = 5
NPV_RATE = 0.05


@dataclass(frozen=True)
class VerdictFacts:
    """What a verdict looks at of one entry."""

    domain: str
    renewal_date: date
    currency: str
    acquisition_cost: float | None
    renewal_cost: float | None
    renewals_paid: float
    current_score: float | None  # 0–100; None: never scored
    expected_value: float | None
    confidence: float | None
    list_price: float | None
    suggested_list_price: float | None
    trademark: TrademarkRisk | None = None  # the gate blocked it at its last appraisal


@dataclass(frozen=True)
class VerdictRules:
    method: DropMethod
    score_threshold: float
    horizon_days: int
    currency: str  # the scoring currency
    sale_commission: float
    annual_sell_through: float
    confidence_cap: float
    # The scoring's list multiplier: the suggested list price is at most this × EV.
    list_multiplier: float = LIST_PRICE_EV_RATIO


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str


def money_words(value: float, currency: str) -> str:
    """$50, $12.34, −$21.40, EUR 1,250: cents only when there are any."""
    sign = "−" if value < 0 else ""
    rounded = round(abs(value), 2)
    figure = f"{rounded:,.0f}" if rounded == int(rounded) else f"{rounded:,.2f}"
    return f"{sign}${figure}" if currency == "USD" else f"{sign}{currency} {figure}"


def _score_words(score: float) -> str:
    return f"{score:g}"


def _due_words(days: int) -> str:
    if days < 0:
        return f"renewal {-days} day{'s' if days != -1 else ''} past due"
    if days == 0:
        return "renewal due today"
    return f"renewal in {days} day{'s' if days != 1 else ''}"


def judge(facts: VerdictFacts, rules: VerdictRules, now: datetime) -> Judgement:
    """The method's verdict; a name matching a trademark keeps it (ADR 0043: the risk is the
    owner's call, not the money's), but its reason says the risk first."""
    judgement = _by_method(facts, rules, now)
    if facts.trademark is None:
        return judgement
    return Judgement(judgement.verdict, f"{facts.trademark.words()} · {judgement.reason}")


def _by_method(facts: VerdictFacts, rules: VerdictRules, now: datetime) -> Judgement:
    days = days_until_renewal(facts.renewal_date, now)
    if facts.current_score is None or facts.expected_value is None or facts.confidence is None:
        return Judgement("reprice", "not scored yet: rescore it before deciding")
    if facts.currency != rules.currency:
        return Judgement(
            "reprice",
            f"its costs are in {facts.currency} but scores are in {rules.currency} "
            "(amounts are never converted): set its costs in "
            f"{rules.currency}",
        )
    if rules.method == "expected":
        return _expected(facts, rules, days)
    if rules.method == "threshold":
        return _threshold(facts, rules, days)
    return _npv(facts, rules, days)


def p_sale_next_year(confidence: float, rules: VerdictRules) -> float:
    """The money gate's P(sale) over one year: 1 − (1 − r)^1 = r."""
    rate = rules.annual_sell_through * confidence / rules.confidence_cap
    return 1.0 - (1.0 - rate) ** 1


def expected_sale_value(facts: VerdictFacts, rules: VerdictRules) -> float:
    assert facts.expected_value is not None and facts.confidence is not None
    chance = p_sale_next_year(facts.confidence, rules)
    return facts.expected_value * (1.0 - rules.sale_commission) * chance


def _expected(facts: VerdictFacts, rules: VerdictRules, days: int) -> Judgement:
    assert facts.expected_value is not None and facts.confidence is not None
    currency = rules.currency
    due = _due_words(days)
    within = within_horizon(days, rules.horizon_days)
    if within:
        if facts.renewal_cost is None:
            return Judgement("reprice", f"{due} but its renewal cost is unknown: set it to decide")
        value = round(expected_sale_value(facts, rules), 2)
        renewal = facts.renewal_cost
        workings = (
            f"EV {money_words(facts.expected_value, currency)} × "
            f"{1 - rules.sale_commission:.2f} × P(sale in a year) "
            f"{p_sale_next_year(facts.confidence, rules) * 100:.2f} %; {due}"
        )
        if not value > renewal:
            sign = ">" if renewal > value else "="
            sunk = ""
            if facts.acquisition_cost:
                sunk = (
                    f"; the {money_words(facts.acquisition_cost, currency)} paid for it is sunk "
                    "and does not count"
                )
            return Judgement(
                "drop",
                f"renewal {money_words(renewal, currency)} {sign} expected sale value "
                f"{money_words(value, currency)} this year ({workings}){sunk}",
            )
    listed = _overpriced(facts, rules)
    if listed is not None:
        return Judgement("reprice", listed)
    if within:
        assert facts.renewal_cost is not None
        value = round(expected_sale_value(facts, rules), 2)
        return Judgement(
            "keep",
            f"expected sale value {money_words(value, currency)} this year > renewal "
            f"{money_words(facts.renewal_cost, currency)}: renew ({_due_words(days)})",
        )
    return Judgement("keep", f"{due}, beyond the {rules.horizon_days}-day horizon")


def _overpriced(facts: VerdictFacts, rules: VerdictRules) -> str | None:
    """The expected method's reprice reason for a name listed above 2.5 × its EV (or above
    the list multiplier × EV, when that is higher), or None."""
    assert facts.expected_value is not None
    ratio = max(LIST_PRICE_EV_RATIO, rules.list_multiplier)
    # In cents, as the suggested list price is: a name listed at it is never half a cent over.
    ceiling = round(ratio * facts.expected_value, 2)
    if facts.list_price is None or not facts.list_price > ceiling:
        return None
    currency = rules.currency
    return (
        f"listed at {money_words(facts.list_price, currency)}, above {ratio:g} × "
        f"EV {money_words(facts.expected_value, currency)} ({money_words(ceiling, currency)}): "
        f"reprice{_to_suggested(facts, currency)}"
    )


def _to_suggested(facts: VerdictFacts, currency: str) -> str:
    """Where to reprice to: the suggested list price, named only when it is below the current
    one (an entry last scored under an older rule may hold a higher suggestion until it is
    rescored)."""
    suggested = facts.suggested_list_price
    if suggested is None or facts.list_price is None or not suggested < facts.list_price:
        return ""
    return f" to the suggested {money_words(suggested, currency)}"


def _threshold(facts: VerdictFacts, rules: VerdictRules, days: int) -> Judgement:
    assert facts.current_score is not None
    currency = rules.currency
    score = facts.current_score
    threshold = rules.score_threshold
    due = _due_words(days)
    low = score < threshold
    if low and within_horizon(days, rules.horizon_days):
        head = f"score {_score_words(score)} below {_score_words(threshold)} with {due}"
        paid = facts.renewals_paid
        if facts.acquisition_cost is None:
            return Judgement(
                "reprice",
                f"{head}, but its acquisition cost is unknown, so whether renewals have "
                "recouped it cannot be told: set it",
            )
        if paid < facts.acquisition_cost:
            return Judgement(
                "reprice",
                f"{head}, but the {money_words(facts.acquisition_cost, currency)} acquisition "
                f"cost is not yet recouped by the {money_words(paid, currency)} paid in renewals",
            )
        return Judgement(
            "drop",
            f"{head} (the {money_words(facts.acquisition_cost, currency)} acquisition cost is "
            f"recouped by the {money_words(paid, currency)} paid in renewals)",
        )
    listed_horizon = LISTED_HORIZON_FACTOR * rules.horizon_days
    if facts.list_price is not None and not low and within_horizon(days, listed_horizon):
        return Judgement(
            "reprice",
            f"listed at {money_words(facts.list_price, currency)} with {due} (within "
            f"{LISTED_HORIZON_FACTOR} × the {rules.horizon_days}-day horizon) and score "
            f"{_score_words(score)} ≥ {_score_words(threshold)}: reprice"
            f"{_to_suggested(facts, currency)}",
        )
    if low:
        return Judgement(
            "keep",
            f"score {_score_words(score)} below {_score_words(threshold)}, but {due}, beyond "
            f"the {rules.horizon_days}-day horizon",
        )
    return Judgement("keep", f"score {_score_words(score)} ≥ {_score_words(threshold)}; {due}")


def npv(facts: VerdictFacts) -> float:
    """−acquisition + Σ_{t=1..5} (EV·confidence − renewal) / 1.05^t; an unknown acquisition
    counts as 0 (the caller says so)."""
    assert facts.expected_value is not None and facts.confidence is not None
    assert facts.renewal_cost is not None
    yearly = facts.expected_value * facts.confidence - facts.renewal_cost
    present = sum(yearly / (1 + NPV_RATE) ** year for year in range(1, NPV_YEARS + 1))
    return -(facts.acquisition_cost or 0.0) + present


def _npv(facts: VerdictFacts, rules: VerdictRules, days: int) -> Judgement:
    assert facts.current_score is not None and facts.expected_value is not None
    assert facts.confidence is not None
    currency = rules.currency
    due = _due_words(days)
    if facts.renewal_cost is None:
        return Judgement("reprice", f"{due} but its renewal cost is unknown: set it to decide")
    value = round(npv(facts), 2)
    acquisition = facts.acquisition_cost
    acquired = (
        money_words(acquisition, currency)
        if acquisition is not None
        else f"unknown, counted as {money_words(0, currency)}"
    )
    workings = (
        f"NPV {money_words(value, currency)} over {NPV_YEARS} years at {NPV_RATE * 100:g} % "
        f"(EV {money_words(facts.expected_value, currency)} × confidence "
        f"{facts.confidence:.2f} − renewal {money_words(facts.renewal_cost, currency)} a year; "
        f"acquisition {acquired})"
    )
    within = within_horizon(days, rules.horizon_days)
    score = facts.current_score
    low = score < rules.score_threshold
    scored = f"score {_score_words(score)}"
    if value < 0 and within:
        if not low and (acquisition or 0) > 0:
            return Judgement(
                "reprice",
                f"{workings} with {due}, but {scored} ≥ {_score_words(rules.score_threshold)} "
                "and it cost money: reprice",
            )
        return Judgement("drop", f"{workings} with {due}")
    if value < 0:
        return Judgement(
            "reprice", f"{workings}; {due}, beyond the {rules.horizon_days}-day horizon"
        )
    if low and within:
        return Judgement(
            "reprice",
            f"{workings}, but {scored} below {_score_words(rules.score_threshold)} with {due}",
        )
    return Judgement("keep", f"{workings}; {due}")
