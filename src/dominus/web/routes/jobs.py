"""/jobs (filtered, searched, paginated, live; the bulk actions are in `jobs_bulk`) and
/jobs/{id} (payload, result, errors, events, live progress, its dead-letter entry; cancel and
retry)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from dominus.api.params import DIGITS_ONLY
from dominus.api.services import ApiServices, Services
from dominus.errors import JobNotFoundError
from dominus.jobs.documents import EventOut, JobOut, JobSummaryOut, dumped
from dominus.jobs.model import ATTEMPT_ERROR_EVENTS, Job, JobStatus
from dominus.jobs.selection import BULK_CAP, waiting_of
from dominus.web.context import Dashboard, Web
from dominus.web.live import OVERVIEW_POLL_SECONDS, DashboardStreamResponse, live_fragments
from dominus.web.routes.forms import bulk_notice, notice_text, see_other
from dominus.web.routes.job_filters import SINCE_CHOICES, STATE_CHOICES, JobListFilter

router = APIRouter()
PAGE_SIZE = 50
JobId = Annotated[int, Path(ge=1), DIGITS_ONLY]
Before = Annotated[int | None, Query(ge=1), DIGITS_ONLY]


@dataclass(frozen=True)
class Listing:
    """A page of the Jobs list: its rows (documents with the wait and the run time added) and
    the job before which the next page starts."""

    listed: JobListFilter
    jobs: list[dict[str, Any]]
    next_before: int | None
    now: datetime


def read_listing(api: ApiServices, listed: JobListFilter, before: int | None) -> Listing:
    now = api.now()
    jobs = api.store.find_jobs(
        listed.selection(now),
        now,
        limit=PAGE_SIZE,
        before_id=before,
        with_payload_and_result=False,
    )
    next_before = jobs[-1].id if len(jobs) == PAGE_SIZE else None
    return Listing(listed, [_row(job, now) for job in jobs], next_before, now)


def _row(job: Job, now: datetime) -> dict[str, Any]:
    row = dumped(JobSummaryOut.of(job))
    waiting = waiting_of(job.status, job.attempts, job.run_at, now)
    row["waiting"] = waiting.value if waiting else None
    row["run_seconds"] = run_seconds(job, now)
    return row


def run_seconds(job: Job, now: datetime) -> float | None:
    """How long its last attempt ran (a running job: so far); None before it started."""
    if job.started_at is None or job.status is JobStatus.PENDING:
        return None
    end = job.finished_at or now
    return max(0.0, (end - job.started_at).total_seconds())


def render_table(web: Dashboard, request: Request, listing: Listing, ticked: bool) -> str:
    return web.pages.fragment(
        "_jobs_table.html", request, listing=listing, jobs=listing.jobs, ticked=ticked
    )


def type_choices(api: ApiServices, current: str) -> list[str]:
    """The registered job types, with any type that has jobs (another host may register
    more) and the one filtered on."""
    names = set(api.queue.registry.names()) | set(api.stats().by_type)
    if current:
        names.add(current)
    return sorted(names)


@router.get("/jobs")
def jobs(
    request: Request,
    api: Services,
    web: Web,
    before: Before = None,
    select: Annotated[Literal["page"] | None, Query()] = None,
) -> Response:
    listed = JobListFilter.read(request.query_params)
    listing = read_listing(api, listed, before)
    live_query = listed.query(before)
    return web.pages.render(
        request,
        "jobs.html",
        title="Jobs",
        table=render_table(web, request, listing, ticked=select == "page"),
        listed=listed,
        states=STATE_CHOICES,
        job_types=type_choices(api, listed.type),
        since_choices=list(SINCE_CHOICES),
        live_url=f"/live/jobs?{live_query}" if live_query else "/live/jobs",
        select_query=urlencode({**listed.fields(), "select": "page"}),
        next_query=listed.query(listing.next_before) if listing.next_before else None,
        first_page=before is None,
        first_query=listed.query(),
        bulk_cap=BULK_CAP,
        notice=bulk_notice(request) or notice_text(request),
    )


@router.get("/live/jobs")
def jobs_live(request: Request, api: Services, web: Web, before: Before = None) -> Response:
    """The list's rows, sent again whenever they change (as the overview's counts are)."""
    listed = JobListFilter.read(request.query_params)
    events = live_fragments(
        read_listing(api, listed, before),
        reread=lambda: read_listing(api, listed, before),
        limits=api.streams,
        render=lambda listing: render_table(web, request, listing, ticked=False),
        status=lambda _listing: "live",
        finished=lambda _listing: False,
        name="jobs",
        ids={},
        poll_seconds=OVERVIEW_POLL_SECONDS,
    )
    return DashboardStreamResponse(events, api.streams, web.streams)


def _attempt_errors(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kinds = {kind.value for kind in ATTEMPT_ERROR_EVENTS}
    return [event for event in events if event["kind"] in kinds]


def render_live(web: Dashboard, request: Request, job: Job) -> str:
    return web.pages.fragment(
        "_job_live.html", request, job=dumped(JobOut.of(job)), now=datetime.now(UTC)
    )


@router.get("/jobs/{job_id}")
def job_page(request: Request, job_id: JobId, api: Services, web: Web) -> Response:
    job = api.store.get_job(job_id)
    events = [dumped(EventOut.of(event)) for event in api.store.job_events(job_id)]
    return web.pages.render(
        request,
        "job.html",
        title=f"Job {job_id}",
        job=dumped(JobOut.of(job)),
        events=events,
        errors=_attempt_errors(events),
        dead_letter=api.store.dead_letter_of_job(job_id),
        live=render_live(web, request, job),
        finished=job.status.is_terminal,
        notice=notice_text(request),
    )


@router.get("/live/jobs/{job_id}")
def job_live(request: Request, job_id: JobId, api: Services, web: Web) -> Response:
    first = api.store.get_job(job_id)  # 404 now, not inside the stream
    events = live_fragments(
        first,
        reread=lambda: api.store.get_job(job_id),
        limits=api.streams,
        render=lambda job: render_live(web, request, job),
        status=lambda job: job.status.value,
        finished=lambda job: job.status.is_terminal,
        name="job",
        ids={"id": job_id},
        gone=JobNotFoundError,
    )
    return DashboardStreamResponse(events, api.streams, web.streams)


@router.post("/jobs/{job_id}/cancel")
def cancel(job_id: JobId, api: Services) -> Response:
    job = api.queue.cancel(job_id)
    notice = "cancelled" if job.status is JobStatus.CANCELLED else "cancel-requested"
    return see_other(f"/jobs/{job_id}", notice)


@router.post("/jobs/{job_id}/retry")
def retry(job_id: JobId, api: Services) -> Response:
    api.queue.retry(job_id)
    return see_other(f"/jobs/{job_id}", "retried")
