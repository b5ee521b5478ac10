"""The scoring engine: pure, synchronous functions that turn a candidate's facts into a `Score`.

score = score_domain(ScoringInput("cloudnest.com", keyword=..., comparables=...),
                     Weights(), ScoringConfig(), today)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dominus.lazy_exports import exported_from

if TYPE_CHECKING:
    from dominus.scoring.comparables import ComparablesIndex, market_signal, relevant_comparables
    from dominus.scoring.config import ScoringConfig
    from dominus.scoring.decision import Tier
    from dominus.scoring.engine import ScoringInput, score_domain
    from dominus.scoring.market import MarketResult
    from dominus.scoring.score import Score
    from dominus.scoring.weights import Weights

# Each name is imported on first use (dominus.lazy_exports says why).
__getattr__ = exported_from(
    {
        "dominus.scoring.comparables": (
            "ComparablesIndex",
            "market_signal",
            "relevant_comparables",
        ),
        "dominus.scoring.config": ("ScoringConfig",),
        "dominus.scoring.decision": ("Tier",),
        "dominus.scoring.engine": ("ScoringInput", "score_domain"),
        "dominus.scoring.market": ("MarketResult",),
        "dominus.scoring.score": ("Score",),
        "dominus.scoring.weights": ("Weights",),
    }
)

__all__ = [
    "ComparablesIndex",
    "MarketResult",
    "Score",
    "ScoringConfig",
    "ScoringInput",
    "Tier",
    "Weights",
    "market_signal",
    "relevant_comparables",
    "score_domain",
]
