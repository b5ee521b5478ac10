"""What the scoring engine is told about one candidate: the one place a `Candidate` and the
providers' data become a `ScoringInput`. The pipeline's score stage and the single-domain
appraisal (`dominus score`, `GET /api/v1/score`) both call `scoring_input`, so an appraisal
scores a name exactly as a run would (ADR 0018)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from dominus.pipeline.stage_results import Candidate
from dominus.providers.models import KeywordStats
from dominus.scoring import ComparablesIndex, ScoringInput
from dominus.valuation import Appraisal


def keyword_key(candidate: Candidate) -> str:
    """The key its keyword figures are looked up by: the phrase a keyword candidate came from,
    otherwise the second-level label (`zentrova` of `zentrova.com`)."""
    return candidate.keyword or candidate.domain.split(".", 1)[0]


def scoring_input(
    candidate: Candidate,
    keyword_data: Mapping[str, KeywordStats],
    comparables: ComparablesIndex,
    today: date,
    renewal_cost: float | None,
    value: Appraisal | None = None,
) -> ScoringInput:
    """A purchase (closeout or auction listing) is scored as one, its listed price the
    acquisition cost; a hand-registration pays the price table's registration."""
    domain = candidate.domain
    return ScoringInput(
        domain=domain,
        keyword=keyword_data.get(keyword_key(candidate)),
        market=comparables.market(domain, today),
        expiry=candidate.expiry,
        renewal_cost=renewal_cost,
        acquisition_price=candidate.price if candidate.purchase else None,
        purchase=candidate.purchase,
        value=value,
    )
