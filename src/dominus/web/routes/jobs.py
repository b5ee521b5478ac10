"""/jobs (filterable, paginated) and /jobs/{id} (payload, result, errors, events, live
progress; cancel and retry)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import Response

from dominus.api.params import DIGITS_ONLY
from dominus.api.services import Services
from dominus.errors import JobNotFoundError
from dominus.jobs.documents import EventOut, JobOut, JobSummaryOut, dumped
from dominus.jobs.model import ATTEMPT_ERROR_EVENTS, Job, JobStatus
from dominus.web.context import Dashboard, Web
from dominus.web.live import DashboardStreamResponse, live_fragments
from dominus.web.routes.forms import notice_text, see_other

router = APIRouter()
PAGE_SIZE = 50
JobId = Annotated[int, Path(ge=1), DIGITS_ONLY]
# The `since` filter's choices: label and hours.
SINCE_CHOICES = {"1h": 1, "24h": 24, "7d": 24 * 7, "30d": 24 * 30}


@router.get("/jobs")
def jobs(
    request: Request,
    api: Services,
    web: Web,
    status: JobStatus | None = None,
    type: Annotated[str | None, Query(max_length=200)] = None,
    since: Annotated[str | None, Query(max_length=10)] = None,
    before: Annotated[int | None, Query(ge=1), DIGITS_ONLY] = None,
) -> Response:
    job_type = (type or "").strip() or None
    hours = SINCE_CHOICES.get(since or "")
    created_after = None
    if hours is not None:
        created_after = api.now().astimezone(UTC) - timedelta(hours=hours)
    listed = api.store.list_jobs(
        status=status,
        job_type=job_type,
        limit=PAGE_SIZE,
        before_id=before,
        created_after=created_after,
        with_payload_and_result=False,
    )
    next_before = listed[-1].id if len(listed) == PAGE_SIZE else None
    filters = {
        "status": status.value if status else "",
        "type": job_type or "",
        "since": since or "",
    }
    return web.pages.render(
        request,
        "jobs.html",
        title="Jobs",
        jobs=[dumped(JobSummaryOut.of(job)) for job in listed],
        statuses=[state.value for state in JobStatus],
        job_types=sorted(api.stats().by_type),
        since_choices=list(SINCE_CHOICES),
        filters=filters,
        next_query=_query(filters, next_before) if next_before else None,
        first_page=before is None,
        first_query=_query(filters, None),
    )


def _query(filters: dict[str, str], before: int | None) -> str:
    values = {name: value for name, value in filters.items() if value}
    if before is not None:
        values["before"] = str(before)
    return urlencode(values)


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
