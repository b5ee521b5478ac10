"""/dead-letters: list, inspect, requeue one or many, purge (after a confirmation page)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from dominus.api.params import DIGITS_ONLY
from dominus.api.services import Services
from dominus.errors import InvalidTransitionError
from dominus.jobs.documents import DeadLetterOut, dumped
from dominus.web.context import Web
from dominus.web.routes.forms import first, form_fields, notice_text, row_id, see_other

router = APIRouter()
LISTED = 200
EntryId = Annotated[int, Path(ge=1), DIGITS_ONLY]
MAX_PURGE_DAYS = 36_500


@router.get("/dead-letters")
def dead_letters(
    request: Request, api: Services, web: Web, include_requeued: bool = False
) -> Response:
    entries = api.store.list_dead_letters(include_requeued=include_requeued, limit=LISTED)
    return web.pages.render(
        request,
        "dead_letters.html",
        title="Dead letters",
        entries=[dumped(DeadLetterOut.of(entry)) for entry in entries],
        include_requeued=include_requeued,
        notice=notice_text(request),
    )


@router.get("/dead-letters/{entry_id}")
def dead_letter(request: Request, entry_id: EntryId, api: Services, web: Web) -> Response:
    entry = api.store.get_dead_letter(entry_id)
    return web.pages.render(
        request,
        "dead_letter.html",
        title=f"Dead letter {entry_id}",
        entry=dumped(DeadLetterOut.of(entry)),
        notice=notice_text(request),
    )


@router.post("/dead-letters/{entry_id}/requeue")
def requeue(entry_id: EntryId, api: Services) -> Response:
    job = api.queue.requeue_dead_letter(entry_id)
    return see_other(f"/jobs/{job.id}", "requeued")


@router.post("/dead-letters/requeue")
async def requeue_many(request: Request, api: Services) -> Response:
    """The entries ticked on the list; those requeued meanwhile are skipped. A value that is
    not an entry's id is a 400 and nothing is requeued."""
    fields = await form_fields(request)
    ids = sorted({row_id(value, "entry") for value in fields.get("entry", [])})
    if not ids:
        return see_other("/dead-letters", "nothing-selected")
    for entry_id in ids:
        try:
            api.queue.requeue_dead_letter(entry_id)
        except InvalidTransitionError:
            continue  # already requeued by someone else: what was asked holds
    return see_other("/dead-letters", "requeued-many")


@router.get("/dead-letters-purge")
def purge_confirmation(request: Request, api: Services, web: Web) -> Response:
    return web.pages.render(
        request,
        "purge.html",
        title="Purge dead letters",
        size=api.stats().dead_letter,
        max_days=MAX_PURGE_DAYS,
    )


@router.post("/dead-letters-purge")
async def purge(request: Request, api: Services, web: Web) -> Response:
    fields = await form_fields(request)
    if first(fields, "confirm") != "yes":
        return see_other("/dead-letters-purge")
    days_text = first(fields, "older_than_days").strip()
    cutoff = None
    if days_text:
        try:
            days = float(days_text)
        except ValueError:
            days = -1.0
        if not 0 <= days <= MAX_PURGE_DAYS:
            return web.pages.render(
                request,
                "purge.html",
                status_code=422,
                title="Purge dead letters",
                size=api.stats().dead_letter,
                max_days=MAX_PURGE_DAYS,
                error=f"Days must be a number from 0 to {MAX_PURGE_DAYS:,}.",
            )
        cutoff = api.now() - timedelta(days=days)
    api.store.purge_dead_letters(cutoff)
    return see_other("/dead-letters", "purged")
