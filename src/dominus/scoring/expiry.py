"""The expiry signal, for names taken from a closeout (expiring-domain) list:

    expiry = 0.4·min(1, age / 20) + 0.4·min(1, backlinks / 1000) + 0.2·min(1, wayback / 500)

Unknown parts count 0. Expiry evidence is at least one fact above 0 (age, backlinks or
archive snapshots); without any, or without `ExpiryFacts` at all (a fresh hand registration), the
signal is unavailable (None): a closeout row with no facts says nothing about the name.
"""

from __future__ import annotations

from dominus.providers.models import ExpiryFacts
from dominus.scoring.commercial import non_negative
from dominus.scoring.config import ScoringConfig


def has_expiry_facts(facts: ExpiryFacts | None) -> bool:
    if facts is None:
        return False
    return any(
        non_negative(value) > 0
        for value in (facts.age_years, facts.backlinks, facts.wayback_snapshots)
    )


def expiry_score(facts: ExpiryFacts | None, config: ScoringConfig) -> float | None:
    if facts is None or not has_expiry_facts(facts):
        return None
    return (
        config.age_share * min(1.0, non_negative(facts.age_years) / config.age_cap_years)
        + config.backlinks_share * min(1.0, non_negative(facts.backlinks) / config.backlinks_cap)
        + config.wayback_share
        * min(1.0, non_negative(facts.wayback_snapshots) / config.wayback_cap)
    )
