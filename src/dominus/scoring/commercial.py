"""The commercial signal, from keyword search volume and cost-per-click:

    commercial = 0.6·min(1, volume / 1,000,000) + 0.4·min(1, cpc / 50)

Available only when there are keyword stats with volume > 0 or cpc > 0: a keyword nobody searches
or bids on is "no data", not "worth zero". Negative or non-finite inputs count as 0.
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


def commercial_score(keyword: KeywordStats | None, config: ScoringConfig) -> float | None:
    if keyword is None:
        return None
    volume = non_negative(keyword.monthly_volume)
    cpc = non_negative(keyword.cpc)
    if volume == 0 and cpc == 0:
        return None
    return config.volume_share * min(1.0, volume / config.volume_cap) + config.cpc_share * min(
        1.0, cpc / config.cpc_cap
    )
