"""The scoring engine: pure, synchronous functions that turn a candidate's facts into a `Score`.

score = score_domain(ScoringInput("cloudnest.com", keyword=..., comparables=...),
                     Weights(), ScoringConfig(), today)
"""

from dominus.scoring.comparables import ComparablesIndex, market_signal, relevant_comparables
from dominus.scoring.config import ScoringConfig
from dominus.scoring.decision import Tier
from dominus.scoring.engine import ScoringInput, score_domain
from dominus.scoring.market import MarketResult
from dominus.scoring.score import Score
from dominus.scoring.weights import Weights

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
