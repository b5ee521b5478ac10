"""What scoring one candidate produces, and its JSON form (stored with each scored candidate)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dominus.scoring.confidence import Confidence
from dominus.scoring.market import MarketResult
from dominus.scoring.value import Anchors
from dominus.scoring.weights import Weights


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
    meets_thresholds: bool
    market_detail: MarketResult
    anchors: Anchors
    anchor: float
    expected_value: float
    suggested_buy_max: float
    suggested_list_price: float
    currency: str = "USD"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: str, float, int, bool, None, and lists and dicts of them."""
        return {
            "domain": self.domain,
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
            "confidence": self.confidence,
            "confidence_detail": self.confidence_detail.to_dict(),
            "score_threshold": self.score_threshold,
            "confidence_threshold": self.confidence_threshold,
            "meets_thresholds": self.meets_thresholds,
            "market": self.market_detail.to_dict(),
            "currency": self.currency,
            "anchors": self.anchors.to_dict(),
            "anchor": self.anchor,
            "expected_value": self.expected_value,
            "suggested_buy_max": self.suggested_buy_max,
            "suggested_list_price": self.suggested_list_price,
        }
