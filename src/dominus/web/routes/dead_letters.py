"""/dead-letters: list (by type and age), inspect, requeue one or many, delete one or many and
purge (each after a confirmation page)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import Response

from dominus.api.params import DIGITS_ONLY
from dominus.api.services import ApiServices, Services
from dominus.errors import InvalidTransitionError
from dominus.jobs.documents import DeadLetterOut, dumped
from dominus.web.context import Web
from dominus.web.routes.forms import first, form_fields, notice_text, row_id, see_other
from dominus.web.routes.jobs import type_choices

router = APIRouter()
LISTED = 200
EntryId = Annotated[int, Path(ge=1), DIGITS_ONLY]
MAX_PURGE_DAYS = 36_500


# The age filter: failed within the last hours, or longer ago than that many hours.
AGE_CHOICES: dict[str, tuple[str, int]] = {
    "1h": ("failed in the last hour", 1),
    "24h": ("failed in the last 24 hours", 24),
    "7d": ("failed in the last 7 days", 24 * 7),
    "older-7d": ("failed more than 7 days ago", 24 * 7),
    "older-30d": ("failed more than 30 days ago", 24 * 30),
}


@router.get("/dead-letters")
def dead_letters(
    request: Request,
    api: Services,
    web: Web,
    include_requeued: bool = False,
    type: Annotated[str | None, Query(max_length=200)] = None,
    age: Annotated[str | None, Query(max_length=10)] = None,
    select: Annotated[Literal["all"] | None, Query()] = None,
) -> Response:
    job_type = (type or "").strip() or None
    if age and age not in AGE_CHOICES:
        raise HTTPException(422, f"age: one of {', '.join(AGE_CHOICES)}")
    failed_after, failed_before = _age_bounds(age or "", api.now())
    entries = api.store.list_dead_letters(
        include_requeued=include_requeued,
        limit=LISTED,
        job_type=job_type,
        failed_after=failed_after,
        failed_before=failed_before,
    )
    filters = {
        name: value
        for name, value in (
            ("include_requeued", "true" if include_requeued else ""),
            ("type", job_type or ""),
            ("age", age or ""),
        )
        if value
    }
    return web.pages.render(
        request,
        "dead_letters.html",
        title="Dead letters",
        entries=[dumped(DeadLetterOut.of(entry)) for entry in entries],
        include_requeued=include_requeued,
        filters=filters,
        job_types=type_choices(api, job_type or ""),
        age_choices=AGE_CHOICES,
        select_query=urlencode({**filters, "select": "all"}),
        ticked=select == "all",
        notice=notice_text(request),
    )


def _age_bounds(age: str, now: datetime) -> tuple[datetime | None, datetime | None]:
    if age not in AGE_CHOICES:
        return None, None
    cutoff = now - timedelta(hours=AGE_CHOICES[age][1])
    return (None, cutoff) if age.startswith("older-") else (cutoff, None)


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
    await run_in_threadpool(_each_exists, api, ids)
    for entry_id in ids:
        try:
            api.queue.requeue_dead_letter(entry_id)
        except InvalidTransitionError:
            continue  # already requeued by someone else: what was asked holds
    return see_other("/dead-letters", "requeued-many")


@router.post("/dead-letters/delete")
async def delete_many(request: Request, api: Services, web: Web) -> Response:
    """Delete the entries ticked on the list (or the one a row's button names, `only`), after
    a page that says how many; their jobs stay failed. A value that is not an entry's id is a
    400 and nothing is deleted."""
    fields = await form_fields(request)
    only = first(fields, "only")
    values = [only] if only else fields.get("entry", [])
    ids = sorted({row_id(value, "entry") for value in values})
    if not ids:
        return see_other("/dead-letters", "nothing-selected")
    await run_in_threadpool(_each_exists, api, ids)
    if first(fields, "confirm") != "yes":
        return web.pages.render(
            request, "dead_letters_delete.html", title="Delete dead letters", ids=ids
        )
    await run_in_threadpool(api.store.delete_dead_letters, ids)
    return see_other("/dead-letters", "deleted-many")


def _each_exists(api: ApiServices, ids: list[int]) -> None:
    """Every entry asked for is there (a 404 naming the first that is not), checked before
    anything is done, so that a request naming one unknown entry changes nothing."""
    for entry_id in ids:
        api.store.get_dead_letter(entry_id)


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
