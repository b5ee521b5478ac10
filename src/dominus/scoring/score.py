"""What scoring one candidate produces, and its JSON form (stored with each scored candidate)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dominus.scoring.confidence import Confidence
from dominus.scoring.decision import Evidence, Tier
from dominus.scoring.market import MarketResult
from dominus.scoring.money import Money
from dominus.scoring.value import Anchors
from dominus.scoring.weights import Weights
from dominus.valuation import Appraisal


@dataclass(frozen=True)
class Score:
    domain: str
    intrinsic: float
    commercial: float | None  # None: signal unavailable (no evidence)
    market: float | None
    expiry: float | None
    effective_weights: Weights  # after reallocation and normalisation (sum 1)
    available_weight: float  # = coverage, in [0, 1]
    coverage_ratio: float  # min(1, available_weight / coverage_floor)
    reallocated: bool
    weighted_score: float
    confidence: float
    confidence_detail: Confidence
    score_threshold: float
    confidence_threshold: float
    tier: Tier
    tier_reason: str
    gates: dict[str, bool]
    evidence: Evidence
    market_detail: MarketResult
    anchors: Anchors
    anchor: float
    expected_value: float
    money: Money
    suggested_buy_max: float
    suggested_list_price: float
    currency: str = "USD"
    # The value model's appraisal (wholesale and retail ranges, why, the comparables used);
    # None when the name was scored without one (EV is then the anchor formula's, value.py).
    value: Appraisal | None = None

    @property
    def recommended(self) -> bool:
        return self.tier is Tier.RECOMMENDED

    @property
    def meets_thresholds(self) -> bool:
        """Every gate passes (the name the pipeline's results and stored documents read; when
        it meant only the two thresholds, they were the whole decision). = `recommended`."""
        return self.recommended

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: str, float, int, bool, None, and lists and dicts of them."""
        return {
            "domain": self.domain,
            "tier": self.tier.value,
            "tier_reason": self.tier_reason,
            "recommended": self.recommended,
            "meets_thresholds": self.meets_thresholds,
            "gates": dict(self.gates),
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
            "score_threshold": self.score_threshold,
            "confidence": self.confidence,
            "confidence_detail": self.confidence_detail.to_dict(),
            "confidence_threshold": self.confidence_threshold,
            "evidence": self.evidence.to_dict(),
            "market": self.market_detail.to_dict(),
            "currency": self.currency,
            "anchors": self.anchors.to_dict(),
            "anchor": self.anchor,
            "expected_value": self.expected_value,
            "money": self.money.to_dict(),
            "suggested_buy_max": self.suggested_buy_max,
            "suggested_list_price": self.suggested_list_price,
            "value": None if self.value is None else self.value.to_dict(),
        }
