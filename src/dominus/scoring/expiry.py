"""The expiry signal, for names taken from a closeout (expiring-domain) list:

    expiry = 0.4·min(1, age / 20) + 0.4·min(1, backlinks / 1000) + 0.2·min(1, wayback / 500)

Unknown parts count 0; no `ExpiryFacts` at all (a fresh hand registration) → unavailable (None).
"""

from __future__ import annotations

from dominus.providers.models import ExpiryFacts
from dominus.scoring.commercial import non_negative
from dominus.scoring.config import ScoringConfig


def expiry_score(facts: ExpiryFacts | None, config: ScoringConfig) -> float | None:
    if facts is None:
        return None
    return (
        config.age_share * min(1.0, non_negative(facts.age_years) / config.age_cap_years)
        + config.backlinks_share * min(1.0, non_negative(facts.backlinks) / config.backlinks_cap)
        + config.wayback_share
        * min(1.0, non_negative(facts.wayback_snapshots) / config.wayback_cap)
    )
