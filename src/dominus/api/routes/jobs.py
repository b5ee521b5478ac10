"""/api/v1/jobs: enqueue, list, inspect, stream, cancel, retry."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse

from dominus.api.params import DIGITS_ONLY
from dominus.api.schemas import EnqueueBody, ErrorBody, IsoDateTime, JobPage
from dominus.api.services import Services
from dominus.api.stream_limits import EventStreamResponse
from dominus.api.streaming import job_stream
from dominus.jobs.documents import EventOut, JobOut, JobSummaryOut
from dominus.jobs.model import Job, JobStatus

router = APIRouter(tags=["jobs"])
JobId = Annotated[int, Path(description="The job id."), DIGITS_ONLY]
NO_STORE = {"Cache-Control": "no-store"}
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 404, 409, 422, 429, 503)
}


# Endpoints that take a body (the limit applies to every request; only these expect one).
TOO_LARGE: dict[int | str, dict[str, Any]] = {
    413: {"model": ErrorBody, "description": "A body over DOMINUS_MAX_BODY_BYTES"}
}


def with_errors(responses: dict[int | str, dict[str, Any]]) -> dict[int | str, dict[str, Any]]:
    return responses | ERRORS


def job_out(job: Job) -> JobOut:
    return JobOut.of(job)


@router.post(
    "/jobs",
    status_code=202,
    response_model=JobOut,
    responses=with_errors(
        TOO_LARGE
        | {
            200: {"model": JobOut, "description": "An active job with that dedupe key"},
            400: {"model": ErrorBody, "description": "A body that is not even text"},
        }
    ),
)
def enqueue(body: EnqueueBody, response: Response, api: Services) -> JobOut:
    """Enqueue a job: 202 with its `Location`; 200 with the existing job when an active job
    holds the same dedupe key. 429 with `Retry-After` when the queue is full."""
    result = api.queue.enqueue_job(
        body.type,
        body.payload,
        priority=body.priority,
        max_attempts=body.max_attempts,
        run_at=_aware(body.run_at),
        dedupe_key=body.dedupe_key,
        timeout_seconds=body.timeout_seconds,
        queue=body.queue,
        concurrency_key=body.concurrency_key,
        concurrency_limit=body.concurrency_limit,
        rate_key=body.rate_key,
    )
    response.headers["Location"] = f"/api/v1/jobs/{result.job_id}"
    if not result.created:
        response.status_code = 200
    return job_out(api.store.get_job(result.job_id))


@router.get("/jobs", response_model=JobPage, responses=ERRORS)
def list_jobs(
    response: Response,
    api: Services,
    status: JobStatus | None = None,
    type: Annotated[str | None, Query(max_length=200)] = None,
    created_after: IsoDateTime | None = None,
    created_before: IsoDateTime | None = None,
    limit: Annotated[int, Query(ge=1, le=1000), DIGITS_ONLY] = 50,
    cursor: Annotated[
        int | None,
        Query(ge=1, description="`next_cursor` of the page before."),
        DIGITS_ONLY,
    ] = None,
) -> JobPage:
    """Jobs, newest first, a page at a time: each without its payload and result, which
    `GET /jobs/{id}` returns."""
    response.headers.update(NO_STORE)
    jobs = api.store.list_jobs(
        status=status,
        job_type=type,
        limit=limit,
        before_id=cursor,
        created_after=utc_filter("created_after", created_after),
        created_before=utc_filter("created_before", created_before),
        with_payload_and_result=False,
    )
    next_cursor = jobs[-1].id if len(jobs) == limit else None
    items = [JobSummaryOut.of(job) for job in jobs]
    return JobPage(items=items, next_cursor=next_cursor)


@router.get("/jobs/{job_id}", response_model=JobOut, responses=ERRORS)
def get_job(job_id: JobId, response: Response, api: Services) -> JobOut:
    """The job with its result, last error and progress."""
    response.headers.update(NO_STORE)
    return job_out(api.store.get_job(job_id))


@router.get("/jobs/{job_id}/events", response_model=list[EventOut], responses=ERRORS)
def job_events(job_id: JobId, response: Response, api: Services) -> list[EventOut]:
    """The job's transitions off the happy path, oldest first."""
    response.headers.update(NO_STORE)
    return [EventOut.of(event) for event in api.store.job_events(job_id)]


@router.get(
    "/jobs/{job_id}/stream",
    response_class=StreamingResponse,
    responses=with_errors({200: {"content": {"text/event-stream": {}}}}),
)
def stream_job(job_id: JobId, api: Services) -> StreamingResponse:
    """Server-Sent Events: a `job` event with the whole job whenever its status, attempt or
    progress changes, until it ends (`end` event). Reads the database, so it follows jobs run
    by any worker on any host. 429 `too_many_streams` when the server already serves
    `DOMINUS_MAX_STREAMS` streams."""
    first = api.store.get_job(job_id)  # 404 now, not inside the stream
    return EventStreamResponse(job_stream(api.store, first, api.streams), api.streams)


@router.post("/jobs/{job_id}/cancel", response_model=JobOut, responses=ERRORS)
def cancel(job_id: JobId, api: Services) -> JobOut:
    """Cancel: a pending job at once, a running one as soon as its worker notices (its
    `cancel_requested_at` is set). 409 if the job already ended."""
    return job_out(api.queue.cancel(job_id))


@router.post("/jobs/{job_id}/retry", response_model=JobOut, responses=ERRORS)
def retry(job_id: JobId, api: Services) -> JobOut:
    """A failed or cancelled job back to pending (same id, attempts reset); 409 otherwise."""
    return job_out(api.queue.retry(job_id))


def utc_filter(name: str, value: datetime | None, where: str = "query") -> datetime | None:
    """A time filter in UTC. A well-formed time whose UTC value is outside the calendar (year
    9999 at -14:00) is bad input, a 422, not something for the database to choke on. `where`
    is the part of the request it came in ("query" or "body")."""
    aware = _aware(value)
    if aware is None:
        return None
    try:
        return aware.astimezone(UTC)
    except OverflowError:
        raise RequestValidationError(
            [
                {
                    "loc": (where, name),
                    "msg": "is outside the range of representable UTC times",
                    "type": "value_error",
                }
            ]
        ) from None


def _aware(value: datetime | None) -> datetime | None:
    """Times without an offset are taken as UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
