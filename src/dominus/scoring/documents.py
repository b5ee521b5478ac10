"""The scoring engine's own document (`Score.to_dict()`, the one a run's score stage stores with
each scored candidate and an appraisal carries as its `score`) described field by field: the
models refuse any other field (`extra="forbid"`), so a field the engine adds fails the tests
until it is documented here."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TierName = Literal["recommended", "speculative", "rejected"]
AvailabilityName = Literal["available", "registered", "unknown"]


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScoreGatesOut(Closed):
    evidence: bool = Field(description="Keyword, market or expiry evidence beyond the name.")
    confidence: bool = Field(description="Confidence ≥ its threshold.")
    score: bool = Field(description="Weighted score ≥ its threshold.")
    money: bool = Field(description="Expected profit > 0 (prices known).")


class SignalsOut(Closed):
    intrinsic: float
    commercial: float | None = Field(description="null: no keyword evidence.")
    market: float | None = Field(description="null: fewer relevant sales than required.")
    expiry: float | None = Field(description="null: no expiry facts.")


class WeightsOut(Closed):
    intrinsic: float
    commercial: float
    market: float
    expiry: float


class ConfidenceDetailOut(Closed):
    covered: float = Field(description="Shares of the covered signals, intrinsic included.")
    extra: float = Field(description="covered − the intrinsic share.")
    signal_part: float
    quality_part: float


class KeywordEvidenceOut(Closed):
    keyword: str
    monthly_volume: int
    cpc: float
    counts: bool = Field(description="Volume ≥ SCORING_MIN_SEARCH_VOLUME, or a CPC above 0.")


class ExpiryEvidenceOut(Closed):
    age_years: float | None
    backlinks: int | None
    wayback_snapshots: int | None
    counts: bool = Field(description="At least one of the facts above 0.")


class SalesEvidenceOut(Closed):
    relevant: int
    required: int
    counts: bool


class EvidenceOut(Closed):
    keyword: KeywordEvidenceOut | None = Field(description="null: no keyword figures found.")
    expiry: ExpiryEvidenceOut | None = Field(description="null: not from a listing.")
    comparable_sales: SalesEvidenceOut


class SaleOut(Closed):
    domain: str
    price: float = Field(description="As sold.")
    adjusted_price: float = Field(description="× the cross-TLD factor (a comparable TLD).")
    currency: str
    date: str = Field(description="Sale date, ISO 8601.")
    recency: float
    overlap: float = Field(description="Shared words / the name's words (1: the same label).")
    shared_words: list[str]
    weight: float = Field(description="recency × overlap.")


class MarketOut(Closed):
    evidence: bool
    relevant_sales: int
    required: int
    statistic: float | None = Field(description="Weighted lower quartile of the sales used.")
    sales: list[SaleOut] = Field(description="Every sale behind the figure, heaviest first.")
    ignored_currency: int
    ignored_invalid: int


class AnchorsOut(Closed):
    market: float | None
    commercial: float | None
    expiry: float | None


class MoneyOut(Closed):
    purchase: bool
    acquisition_cost: float | None = Field(description="Registration fee or listed price.")
    renewal_per_year: float | None
    holding_years: int
    holding_cost: float | None = Field(description="Acquisition + renewals over the years.")
    carrying_cost: float | None = Field(description="The holding cost without a seller's price.")
    sale_commission: float
    annual_sell_through: float
    sell_through_rate: float = Field(description="r = sell-through × confidence / cap.")
    p_sale: float = Field(description="1 − (1 − r)^years.")
    expected_revenue: float = Field(description="EV × (1 − commission) × P(sale).")
    expected_profit: float | None = Field(description="Revenue − holding cost; null: no price.")
    buy_max: float
    price_source: str
    problem: str | None = Field(description="Why the gate cannot pass (a missing price).")
    passes: bool
    wholesale_p50: float | None = Field(
        None, description="What investors pay each other for the name (value model's P50)."
    )
    above_wholesale: bool = Field(
        False, description="A purchase listed above the wholesale P50 (said in the reason)."
    )


class RangeOut(Closed):
    p10: float
    p50: float
    p90: float


class ValueModelOut(Closed):
    name: str
    version: str
    trained_on: str


class ContributionOut(Closed):
    label: str = Field(description="What moved the value, in words.")
    dollars: float = Field(description="What the retail P50 would lose without it.")
    factor: float = Field(description="Its multiplicative effect (2.0 doubles the value).")


class UsedComparableOut(Closed):
    domain: str
    price: float
    date: date
    venue: str
    similarity: float
    why: str


class ValueOut(Closed):
    """The value model's appraisal: what investors pay each other (wholesale) and what an end
    user pays (retail), each P10, P50 and P90 in US dollars; why; the comparable sales used."""

    domain: str
    wholesale: RangeOut
    retail: RangeOut
    model: ValueModelOut
    contributions: list[ContributionOut]
    comparables: list[UsedComparableOut]


class ScoreOut(Closed):
    """The scoring engine's document (as a run's score stage stores it)."""

    domain: str
    tier: TierName = Field(description="The score's decision, before trademark/availability.")
    tier_reason: str
    recommended: bool
    meets_thresholds: bool
    gates: ScoreGatesOut
    signals: SignalsOut
    effective_weights: WeightsOut
    available_weight: float
    coverage_ratio: float
    reallocated: bool
    weighted_score: float
    score_threshold: float
    confidence: float
    confidence_detail: ConfidenceDetailOut
    confidence_threshold: float
    evidence: EvidenceOut
    market: MarketOut
    currency: str
    anchors: AnchorsOut
    anchor: float
    expected_value: float = Field(description="EV = weighted score × anchor.")
    money: MoneyOut
    suggested_buy_max: float
    suggested_list_price: float
    value: ValueOut | None = Field(
        None, description="The value model's appraisal; `expected_value` is its retail P50."
    )
