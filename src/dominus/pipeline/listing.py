"""A run's candidates as listed by `dominus runs candidates` and `/runs/{id}/candidates`: the
scored ones in ranking order and, with `include_dropped` (`--all`), every other candidate after
them, each with the stage that dropped it and why (ADR 0017).

The scored candidates come from `scoring_runs`; the others from the run's checkpoints of stages
1 to 3 (kept with the run; the `candidates` table is shared by every run and holds only the
latest answer for a name): an invalid input (stage generate), a name DNS or RDAP found
registered or could not settle, a name a stage never got to because it ran out of its budget or
failed (its report in the run says which), a name that passed and was not scored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from dominus.jobs.documents import dumped
from dominus.pipeline.documents import CandidateOut, DroppedCandidateOut, ListedCandidateOut
from dominus.pipeline.model import Stage
from dominus.pipeline.stage_results import (
    Candidate,
    DnsAnswer,
    DnsResult,
    GenerateResult,
    RdapAnswer,
    RdapResult,
)
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.pipeline.tiers import not_checked
from dominus.providers.models import Availability

LOOKUP_STAGES = (Stage.GENERATE, Stage.DNS, Stage.RDAP)


@dataclass(frozen=True)
class ListingQuery:
    recommended_only: bool = False
    include_dropped: bool = False  # `--all`: the candidates that never reached scoring too
    top: int | None = None  # only the first `top` of the ranking
    limit: int | None = None  # a page of the (top) listing: `limit` from `offset`
    offset: int = 0

    def window(self) -> tuple[int, int | None]:
        """[start, end) of the ranking to list (end None: to the end)."""
        ends = [end for end in (self.top, _plus(self.offset, self.limit)) if end is not None]
        return self.offset, min(ends) if ends else None


def _plus(offset: int, limit: int | None) -> int | None:
    return None if limit is None else offset + limit


def listed_candidates(
    store: PipelineStore, run: RunRecord, query: ListingQuery
) -> Iterator[ListedCandidateOut]:
    """The listing, read as it is consumed (scored rows in batches)."""
    start, end = query.window()
    if end is not None and end <= start:
        return
    scored = store.count_scores(run.id, recommended_only=query.recommended_only)
    if start < scored:
        limit = None if end is None else min(end, scored) - start
        rows = store.iter_run_scores(
            run.id, recommended_only=query.recommended_only, limit=limit, offset=start
        )
        yield from (CandidateOut.of(row) for row in rows)
    if not query.include_dropped or query.recommended_only or (end is not None and end <= scored):
        return
    dropped = dropped_candidates(store, run)
    first = max(0, start - scored)
    last = None if end is None else end - scored
    yield from islice(dropped, first, last)


def dropped_candidates(store: PipelineStore, run: RunRecord) -> list[DroppedCandidateOut]:
    """Every candidate of the run that has no score, in input order, then the invalid inputs."""
    checkpoints = store.checkpoints(run.id, LOOKUP_STAGES)
    if Stage.GENERATE not in checkpoints:
        return []  # the run has not generated its candidates yet
    generated = GenerateResult.from_json(checkpoints[Stage.GENERATE])
    dns = DnsResult.from_json(checkpoints.get(Stage.DNS, {})).results
    rdap = RdapResult.from_json(checkpoints.get(Stage.RDAP, {})).results
    scored = store.scored_domains(run.id)
    reports = run.stages
    dropped = [
        DroppedCandidateOut.of(candidate, *_where_dropped(candidate, dns, rdap, reports))
        for candidate in generated.candidates
        if candidate.domain not in scored
    ]
    dropped += [DroppedCandidateOut.invalid(entry) for entry in generated.invalid]
    return dropped


def _where_dropped(
    candidate: Candidate,
    dns: Mapping[str, DnsAnswer],
    rdap: Mapping[str, RdapAnswer],
    reports: Mapping[str, Any],
) -> tuple[Stage, str]:
    """The stage that stopped a candidate without a score, and the reason in words. A purchase
    is never stopped by DNS or RDAP (ADR 0016): only scoring can have missed it."""
    domain = candidate.domain
    if not candidate.purchase:
        answers: tuple[tuple[Stage, DnsAnswer | RdapAnswer | None], ...] = (
            (Stage.DNS, dns.get(domain)),
            (Stage.RDAP, rdap.get(domain)),
        )
        for stage, answer in answers:
            if answer is None:
                return stage, not_checked(reports.get(stage.value))
            if answer.availability is not Availability.AVAILABLE:
                return stage, _answer_words(answer)
    return Stage.SCORE, not_checked(reports.get(Stage.SCORE.value))


def _answer_words(answer: DnsAnswer | RdapAnswer) -> str:
    """ "registered (rdap: HTTP 200)", "unknown (SERVFAIL from every resolver)"."""
    detail = answer.detail
    if isinstance(answer, RdapAnswer):
        detail = f"{answer.source}: {detail}" if detail else answer.source
    return f"{answer.availability.value} ({detail})" if detail else answer.availability.value


def candidate_listing(
    store: PipelineStore, run: RunRecord, query: ListingQuery
) -> Iterator[dict[str, Any]]:
    """The listing's JSON documents, read as they are consumed (the CSV export's rows)."""
    return (dumped(candidate) for candidate in listed_candidates(store, run, query))


def listing_documents(
    store: PipelineStore, run: RunRecord, query: ListingQuery
) -> Sequence[dict[str, Any]]:
    """The whole listing in memory (a page of the API, the CLI's table or JSON)."""
    return list(candidate_listing(store, run, query))
