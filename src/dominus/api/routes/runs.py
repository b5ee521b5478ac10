"""/api/v1/runs: start pipeline runs and follow them."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import IO, Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Response
from fastapi.responses import JSONResponse, StreamingResponse

from dominus.api.errors import error_response
from dominus.api.params import DIGITS_ONLY
from dominus.api.routes.jobs import ERRORS, NO_STORE, TOO_LARGE, job_out, with_errors
from dominus.api.run_schemas import RunCreated, RunPage, RunRequest
from dominus.api.run_streaming import run_stream
from dominus.api.schemas import ErrorBody
from dominus.api.services import ApiServices, Services
from dominus.api.stream_limits import EventStreamResponse
from dominus.errors import JobNotFoundError
from dominus.jobs.documents import JobOut
from dominus.pipeline.documents import (
    CandidateOut,
    DroppedCandidateOut,
    RunOut,
    RunSummaryOut,
    job_of_run,
)
from dominus.pipeline.listing import ListingQuery, candidate_listing, listed_candidates
from dominus.pipeline.model import MAX_INPUT_NAMES as MAX_TOP
from dominus.pipeline.model import CloseoutDomain, RunInput
from dominus.pipeline.run_export import candidates_csv
from dominus.pipeline.store import RunRecord

router = APIRouter(tags=["runs"])
RunId = Annotated[int, Path(description="The run id."), DIGITS_ONLY]
API = "/api/v1"
SPOOL_BYTES = 4 * 1024 * 1024  # a CSV export larger than this waits in a temporary file
STREAM_BLOCK_BYTES = 64 * 1024


def run_out(api: ApiServices, run: RunRecord) -> RunOut:
    return RunOut.of(run, job_of_run(api.store, run))


@router.post(
    "/runs",
    status_code=202,
    response_model=RunCreated,
    responses=with_errors(
        TOO_LARGE | {400: {"model": ErrorBody, "description": "No input at all"}}
    ),
)
def create_run(body: RunRequest, api: Services) -> Any:
    """Start a pipeline run (a PIPELINE_RUN job): 202 with `Location: /api/v1/runs/{run_id}`."""
    closeouts = [
        item if isinstance(item, CloseoutDomain) else CloseoutDomain(domain=item)
        for item in body.closeout_domains
    ]
    if not (body.keywords or body.brandable_names or closeouts):
        return error_response(
            400, "no_input", "give at least one of keywords, brandable_names, closeout_domains"
        )
    run_input = RunInput(keywords=body.keywords, brandable=body.brandable_names, closeout=closeouts)
    run = api.pipeline.submit(run_input)
    location = f"{API}/runs/{run.id}"
    created = RunCreated(
        run_id=run.id,
        job_id=run.job_id,
        status=run.status.value,
        links={
            "self": location,
            "job": f"{location}/job",
            "candidates": f"{location}/candidates",
            "stream": f"{location}/stream",
        },
    )
    return JSONResponse(
        created.model_dump(by_alias=True), status_code=202, headers={"Location": location}
    )


@router.get("/runs", response_model=RunPage, responses=ERRORS)
def list_runs(
    response: Response,
    api: Services,
    limit: Annotated[int, Query(ge=1, le=1000), DIGITS_ONLY] = 50,
    cursor: Annotated[
        int | None,
        Query(ge=1, description="`next_cursor` of the page before."),
        DIGITS_ONLY,
    ] = None,
) -> RunPage:
    """Runs, newest first, each with the size of its input lists (`input_summary`); the
    input itself is in `GET /runs/{id}`."""
    response.headers.update(NO_STORE)
    runs = api.runs.list_runs(limit=limit, before_id=cursor)
    next_cursor = runs[-1].id if len(runs) == limit else None
    items = [RunSummaryOut.of(run, job_of_run(api.store, run)) for run in runs]
    return RunPage(items=items, next_cursor=next_cursor)


@router.get("/runs/{run_id}", response_model=RunOut, responses=ERRORS)
def get_run(run_id: RunId, response: Response, api: Services) -> RunOut:
    """The run: status (corrected by its job's), stages, summary, degradation."""
    response.headers.update(NO_STORE)
    return run_out(api, api.runs.get_run(run_id))


@router.get("/runs/{run_id}/job", response_model=JobOut, responses=ERRORS)
def get_run_job(run_id: RunId, response: Response, api: Services) -> JobOut:
    """The run's job, read from the job table (404 for runs made with `--sync`, and once the
    finished job was pruned)."""
    response.headers.update(NO_STORE)
    run = api.runs.get_run(run_id)
    if run.job_id is None:
        raise JobNotFoundError(f"run {run_id} ran in-process and has no job")
    job = job_of_run(api.store, run)
    if job is None:
        raise JobNotFoundError(
            f"job {run.job_id} of run {run_id} was pruned (finished jobs are deleted after "
            "JOB_RETENTION_DAYS); the run itself is kept"
        )
    return job_out(job)


class ListingParams:
    """The query of both candidate listings (JSON and CSV)."""

    def __init__(
        self,
        recommended: Annotated[bool, Query(description="Only recommended candidates.")] = False,
        include_dropped: Annotated[
            bool,
            Query(
                alias="all",
                description="Also the candidates that never got a score (invalid input, "
                "dropped by DNS or RDAP, a stage over budget), after the scored ones, each with "
                "its stage and `dropped_reason`.",
            ),
        ] = False,
        top: Annotated[
            int | None,
            Query(ge=1, le=MAX_TOP, description="Only the first `top` of the ranking."),
            DIGITS_ONLY,
        ] = None,
        offset: Annotated[int, Query(ge=0, le=10_000_000), DIGITS_ONLY] = 0,
    ) -> None:
        self.recommended = recommended
        self.include_dropped = include_dropped
        self.top = top
        self.offset = offset

    def query(self, limit: int | None) -> ListingQuery:
        return ListingQuery(
            recommended_only=self.recommended,
            include_dropped=self.include_dropped,
            top=self.top,
            limit=limit,
            offset=self.offset,
        )


Listing = Annotated[ListingParams, Depends()]


@router.get(
    "/runs/{run_id}/candidates",
    response_model=list[CandidateOut | DroppedCandidateOut],
    responses=ERRORS,
)
def run_candidates(
    run_id: RunId,
    response: Response,
    api: Services,
    listing: Listing,
    limit: Annotated[int, Query(ge=1, le=10_000), DIGITS_ONLY] = 100,
) -> list[CandidateOut | DroppedCandidateOut]:
    """The run's candidates in ranking order: recommended by expected profit, then speculative,
    then rejected (each tier by expected profit); with `all=true`, then every candidate that
    never got a score. `top` keeps the first K of that ranking; `limit` and `offset` page it."""
    response.headers.update(NO_STORE)
    run = api.runs.get_run(run_id)
    return list(listed_candidates(api.runs, run, listing.query(limit)))


@router.get(
    "/runs/{run_id}/candidates.csv",
    response_class=StreamingResponse,
    responses=with_errors({200: {"content": {"text/csv": {"schema": {"type": "string"}}}}}),
)
def run_candidates_csv(
    run_id: RunId,
    api: Services,
    listing: Listing,
    limit: Annotated[
        int | None,
        Query(ge=1, le=MAX_TOP, description="At most this many rows (default: all)."),
        DIGITS_ONLY,
    ] = None,
    all_columns: Annotated[
        bool,
        Query(description="Every field of the JSON (nested ones with dotted names), unrounded."),
    ] = False,
) -> StreamingResponse:
    """The listing of `/candidates` (same parameters; every row unless `limit`) as CSV: the
    columns a person sorts by (domain, tier, profit, value P50 with P10/P90, buy max, confidence,
    score, trademark, reason...), money in cents, ratios to 3 decimals; `all_columns=true`: every
    field. A header row, RFC 4180 quoting, CRLF, UTF-8 with a BOM, and a `'` before any text
    cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return (spreadsheet formula
    injection); numbers are written as numbers."""
    run = api.runs.get_run(run_id)
    query = listing.query(limit)
    export = candidates_csv(
        lambda: candidate_listing(api.runs, run, query), all_columns=all_columns
    )
    # Written whole before answering, in this thread: the database is read here (a failure is
    # still an error response, and a connection never crosses threads), and a large export
    # goes to a temporary file rather than memory; the answer streams from it.
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed by stream
    try:
        for chunk in export.chunks():
            spool.write(chunk.encode("utf-8"))
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    headers = NO_STORE | {
        "Content-Disposition": f'attachment; filename="run-{run.id}-candidates.csv"'
    }
    return StreamingResponse(
        _read_through(spool), media_type="text/csv; charset=utf-8", headers=headers
    )


def _read_through(spool: IO[bytes]) -> Iterator[bytes]:
    with spool:
        while block := spool.read(STREAM_BLOCK_BYTES):
            yield block


@router.get(
    "/runs/{run_id}/stream",
    response_class=StreamingResponse,
    responses=with_errors({200: {"content": {"text/event-stream": {}}}}),
)
def stream_run(run_id: RunId, api: Services) -> StreamingResponse:
    """Server-Sent Events: a `run` event whenever the run's status, a stage or the progress
    changes, then `end`. Reads the database, so it follows runs on any worker. 429
    `too_many_streams` when the server already serves `DOMINUS_MAX_STREAMS` streams."""
    api.runs.get_run(run_id)  # 404 now, not inside the stream
    return EventStreamResponse(run_stream(api.runs, api.store, run_id, api.streams), api.streams)
