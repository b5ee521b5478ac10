"""The commercial signal, from keyword search volume and cost-per-click, on a log scale:

    volume part = min(1, log10(1 + volume) / log10(1 + 1,000,000))
    cpc part    = min(1, log10(1 + cpc) / log10(1 + 50))
    commercial  = 0.6 · volume part + 0.4 · cpc part

Search volumes and bids spread over orders of magnitude: on the linear scale used before, a real
keyword (33,100 searches a month, $1.25 a click) scored 0.03, indistinguishable from nothing. On
the log scale it scores 0.53, a keyword a hundred times bigger still scores higher, and the cap
(one million searches, $50 a click) is where the signal saturates.

Available only with keyword evidence, the rule the decision uses: volume ≥
`min_search_volume` (1,000 a month) or a CPC above 0. Below that the keyword is shown as a fact
but is "no data", not "worth something". Negative or non-finite inputs count as 0.
"""

from __future__ import annotations

import math

from dominus.providers.models import KeywordStats
from dominus.scoring.config import ScoringConfig


def non_negative(value: float | None) -> float:
    """`value` if it is finite and ≥ 0, else 0 (unknown, NaN and negative facts add nothing)."""
    if value is None or not math.isfinite(value) or value < 0:
        return 0.0
    return float(value)


def log_share(value: float, cap: float) -> float:
    """min(1, log10(1 + value) / log10(1 + cap)): 0 at 0, 1 at the cap and above."""
    return min(1.0, math.log10(1.0 + value) / math.log10(1.0 + cap))


def is_keyword_evidence(keyword: KeywordStats | None, config: ScoringConfig) -> bool:
    if keyword is None:
        return False
    volume = non_negative(keyword.monthly_volume)
    return volume >= config.min_search_volume or non_negative(keyword.cpc) > 0


def commercial_score(keyword: KeywordStats | None, config: ScoringConfig) -> float | None:
    if keyword is None or not is_keyword_evidence(keyword, config):
        return None
    return config.volume_share * log_share(
        non_negative(keyword.monthly_volume), config.volume_cap
    ) + config.cpc_share * log_share(non_negative(keyword.cpc), config.cpc_cap)
