"""The scoring engine: pure, synchronous functions that turn a candidate's facts into a `Score`.

score = score_domain(ScoringInput("cloudnest.com", keyword=..., comparables=...),
                     Weights(), ScoringConfig(), today)
"""

from dominus.scoring.config import ScoringConfig
from dominus.scoring.engine import Score, ScoringInput, score_domain
from dominus.scoring.market import ComparablesIndex, MarketResult, relevant_comparables
from dominus.scoring.weights import Weights

__all__ = [
    "ComparablesIndex",
    "MarketResult",
    "Score",
    "ScoringConfig",
    "ScoringInput",
    "Weights",
    "relevant_comparables",
    "score_domain",
]
