"""The decision: recommended, speculative or rejected, and why, in words.

A candidate is recommended only when every gate passes:
  - evidence: market evidence (at least `min_comparables` relevant comparable sales), or keyword
    evidence (volume ≥ `min_search_volume` a month, or a CPC above 0), or expiry facts (age,
    backlinks or archive snapshots);
  - confidence ≥ its threshold, and weighted score ≥ its threshold (weighting.py);
  - money: expected profit > 0 (money.py), which needs the prices to be known.

Tiers: `recommended` (every gate passes); `speculative` (no evidence: only the intrinsic signal
speaks for the name; shown apart, never among the recommendations); `rejected` (evidence, but a
gate fails). The reason names each failed gate with its figures, for example
"expected profit −$21.40: EV $310.00 × 0.80 × P(sale 3 y) 2.20 % − holding $31.38".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dominus.providers.models import ExpiryFacts, KeywordStats
from dominus.scoring.commercial import non_negative
from dominus.scoring.money import Money


class Tier(StrEnum):
    RECOMMENDED = "recommended"
    SPECULATIVE = "speculative"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Evidence:
    keyword: KeywordStats | None
    keyword_counts: bool
    min_search_volume: int
    expiry: ExpiryFacts | None
    expiry_counts: bool
    relevant_sales: int
    required_sales: int

    @property
    def market_counts(self) -> bool:
        return self.relevant_sales >= self.required_sales

    @property
    def any(self) -> bool:
        return self.keyword_counts or self.market_counts or self.expiry_counts

    def to_dict(self) -> dict[str, Any]:
        keyword = self.keyword
        expiry = self.expiry
        return {
            "keyword": None
            if keyword is None
            else {
                "keyword": keyword.keyword,
                "monthly_volume": keyword.monthly_volume,
                "cpc": keyword.cpc,
                "counts": self.keyword_counts,
            },
            "expiry": None
            if expiry is None
            else {
                "age_years": expiry.age_years,
                "backlinks": expiry.backlinks,
                "wayback_snapshots": expiry.wayback_snapshots,
                "counts": self.expiry_counts,
            },
            "comparable_sales": {
                "relevant": self.relevant_sales,
                "required": self.required_sales,
                "counts": self.market_counts,
            },
        }


@dataclass(frozen=True)
class Figures:
    """What the threshold gates compare."""

    confidence: float
    confidence_threshold: float
    weighted_score: float
    score_threshold: float
    expected_value: float
    currency: str


@dataclass(frozen=True)
class Decision:
    tier: Tier
    reason: str
    gates: dict[str, bool]  # evidence, confidence, score, money → passed

    @property
    def recommended(self) -> bool:
        return self.tier is Tier.RECOMMENDED


def decide(evidence: Evidence, figures: Figures, money: Money) -> Decision:
    gates = {
        "evidence": evidence.any,
        "confidence": figures.confidence >= figures.confidence_threshold,
        "score": figures.weighted_score >= figures.score_threshold,
        "money": money.passes,
    }
    phrases = {
        "evidence": _evidence_phrase(evidence),
        "confidence": _threshold_phrase(
            "confidence", figures.confidence, figures.confidence_threshold, gates["confidence"]
        ),
        "score": _threshold_phrase(
            "score", figures.weighted_score, figures.score_threshold, gates["score"]
        ),
        "money": _money_phrase(money, figures),
    }
    if all(gates.values()):
        reason = "every gate passes: " + "; ".join(phrases.values())
        return Decision(Tier.RECOMMENDED, reason, gates)
    failed = "; ".join(phrases[gate] for gate, passed in gates.items() if not passed)
    tier = Tier.REJECTED if evidence.any else Tier.SPECULATIVE
    return Decision(tier, failed, gates)


def _evidence_phrase(evidence: Evidence) -> str:
    parts = [_keyword_phrase(evidence), _sales_phrase(evidence), _expiry_phrase(evidence)]
    if evidence.any:
        return "evidence: " + ", ".join(part for part, counts in parts if counts)
    return "only the intrinsic signal (" + ", ".join(part for part, _ in parts) + ")"


def _keyword_phrase(evidence: Evidence) -> tuple[str, bool]:
    keyword = evidence.keyword
    if keyword is None:
        return "no keyword data", False
    volume = non_negative(keyword.monthly_volume)
    cpc = non_negative(keyword.cpc)
    figures = f"{volume:,.0f} searches/month, CPC ${cpc:,.2f}"
    if evidence.keyword_counts:
        return f"keyword {figures}", True
    return f"keyword {figures} (under {evidence.min_search_volume:,} and no CPC)", False


def _sales_phrase(evidence: Evidence) -> tuple[str, bool]:
    sales = "sale" if evidence.relevant_sales == 1 else "sales"
    if evidence.market_counts:
        return f"{evidence.relevant_sales} comparable {sales}", True
    return f"{evidence.relevant_sales} of {evidence.required_sales} comparable sales", False


def _expiry_phrase(evidence: Evidence) -> tuple[str, bool]:
    facts = evidence.expiry
    if facts is None or not evidence.expiry_counts:
        return "no expiry facts", False
    parts = []
    if non_negative(facts.age_years) > 0:
        parts.append(f"{non_negative(facts.age_years):g} years old")
    if non_negative(facts.backlinks) > 0:
        parts.append(f"{non_negative(facts.backlinks):,.0f} backlinks")
    if non_negative(facts.wayback_snapshots) > 0:
        parts.append(f"{non_negative(facts.wayback_snapshots):,.0f} archive snapshots")
    return "expiry " + ", ".join(parts), True


def _threshold_phrase(name: str, value: float, threshold: float, passed: bool) -> str:
    if passed:
        return f"{name} {value:.2f} ≥ {threshold:.2f}"
    return f"{name} {value:.2f} below its threshold {threshold:.2f}"


def amount(value: float, currency: str) -> str:
    """$1,234.56 (USD) or EUR 1,234.56; negative amounts with a minus sign: −$21.40."""
    sign = "−" if value < 0 else ""
    figure = f"{abs(value):,.2f}"
    return f"{sign}${figure}" if currency == "USD" else f"{sign}{currency} {figure}"


def _money_phrase(money: Money, figures: Figures) -> str:
    if money.problem is not None or money.expected_profit is None or money.holding_cost is None:
        return money.problem or "the money gate could not be worked out"
    currency = figures.currency
    phrase = (
        f"expected profit {amount(money.expected_profit, currency)}: "
        f"EV {amount(figures.expected_value, currency)} × {1 - money.sale_commission:.2f} × "
        f"P(sale {money.holding_years} y) {money.p_sale * 100:.2f} % − "
        f"holding {amount(money.holding_cost, currency)}"
    )
    if money.above_wholesale and money.wholesale_p50 is not None:
        phrase += (
            f"; listed above what investors pay each other (wholesale "
            f"{amount(money.wholesale_p50, currency)})"
        )
    return phrase
