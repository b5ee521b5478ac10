"""/api/v1/dlq: the dead-letter queue."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Query

from dominus.api.params import DIGITS_ONLY
from dominus.api.routes.jobs import ERRORS, job_out
from dominus.api.services import Services
from dominus.jobs.documents import DeadLetterOut, JobOut, PurgeOut
from dominus.jobs.model import DeadLetterEntry

router = APIRouter(tags=["dead-letter queue"])
EntryId = Annotated[int, Path(description="The dead-letter entry id."), DIGITS_ONLY]


def entry_out(entry: DeadLetterEntry) -> DeadLetterOut:
    return DeadLetterOut.of(entry)


@router.get("/dlq", response_model=list[DeadLetterOut], responses=ERRORS)
def list_entries(
    api: Services,
    include_requeued: bool = False,
    limit: Annotated[int, Query(ge=1, le=1000), DIGITS_ONLY] = 100,
) -> list[DeadLetterOut]:
    """Dead-letter entries, newest first (requeued ones only with `include_requeued`)."""
    entries = api.store.list_dead_letters(include_requeued=include_requeued, limit=limit)
    return [entry_out(entry) for entry in entries]


@router.get("/dlq/{entry_id}", response_model=DeadLetterOut, responses=ERRORS)
def get_entry(entry_id: EntryId, api: Services) -> DeadLetterOut:
    """An entry with every attempt's error and traceback."""
    return entry_out(api.store.get_dead_letter(entry_id))


@router.post("/dlq/{entry_id}/requeue", response_model=JobOut, responses=ERRORS)
def requeue(entry_id: EntryId, api: Services) -> JobOut:
    """The entry's job (same id) back to pending, attempts reset; 409 if already requeued."""
    return job_out(api.queue.requeue_dead_letter(entry_id))


@router.delete("/dlq", response_model=PurgeOut, responses=ERRORS)
def purge(
    api: Services,
    older_than_days: Annotated[float | None, Query(ge=0, le=36_500)] = None,
) -> PurgeOut:
    """Delete entries (those that failed more than `older_than_days` ago, if given)."""
    cutoff = None if older_than_days is None else api.now() - timedelta(days=older_than_days)
    return PurgeOut(purged=api.store.purge_dead_letters(cutoff))
