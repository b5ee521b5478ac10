"""/runs: start a run from a form, the list; /runs/{id}: the per-stage funnel (live) with each
stage's time, the recommendations table (sortable) with each reason in full, the names dropped
before scoring and why, CSV download."""

from __future__ import annotations

import csv
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import ValidationError
from starlette.responses import Response

from dominus.api.params import DIGITS_ONLY
from dominus.api.routes.runs import ListingParams, run_candidates_csv
from dominus.api.run_streaming import RunState
from dominus.api.services import ApiServices, Services
from dominus.jobs.documents import dumped
from dominus.pipeline.documents import (
    RunOut,
    RunSummaryOut,
    effective_status,
    is_finished,
    job_of_run,
)
from dominus.pipeline.listing import ListingQuery, dropped_candidates, listing_documents
from dominus.pipeline.model import STAGES, CloseoutDomain, RunInput
from dominus.pipeline.store import RunNotFoundError
from dominus.providers.csvfiles import csv_problem
from dominus.providers.gate_waits import describe_wait
from dominus.providers.setup import ProviderChoiceError
from dominus.web.context import Dashboard, Web
from dominus.web.live import DashboardStreamResponse, live_fragments
from dominus.web.routes.forms import first, form_fields, notice_text, see_other

router = APIRouter()
RunId = Annotated[int, Path(ge=1), DIGITS_ONLY]
LISTED_RUNS = 50
SHOWN_CANDIDATES = 500
CLOSEOUT_COLUMNS = ("domain", "age", "backlinks", "wayback", "price")
# Sortable columns of the candidates table: the document key, and whether it starts descending.
SORTS: dict[str, tuple[str, bool]] = {
    "domain": ("domain", False),
    "tier": ("tier", False),
    "profit": ("expected_profit", True),
    "value": ("expected_value", True),
    "buy_max": ("suggested_buy_max", True),
    "confidence": ("confidence", True),
    "score": ("weighted_score", True),
}
TIER_ORDER = {"recommended": 0, "speculative": 1, "rejected": 2}


# --- the list and the form ------------------------------------------------------------------
def _runs_page(
    request: Request,
    api: ApiServices,
    web: Dashboard,
    *,
    form: dict[str, str] | None = None,
    errors: list[str] | None = None,
    status_code: int = 200,
) -> Response:
    runs = [
        dumped(RunSummaryOut.of(run, job_of_run(api.store, run)))
        for run in api.runs.list_runs(limit=LISTED_RUNS)
    ]
    return web.pages.render(
        request,
        "runs.html",
        status_code=status_code,
        title="Runs",
        runs=runs,
        form=form or {"keywords": "", "brandables": "", "closeouts": ""},
        errors=errors or [],
        providers=api.runtime.settings.DOMINUS_PROVIDERS,
        notice=notice_text(request),
    )


@router.get("/runs")
def runs(request: Request, api: Services, web: Web) -> Response:
    return _runs_page(request, api, web)


def _names(text: str) -> list[str]:
    """One name per line (commas separate too); blank entries skipped."""
    return [part.strip() for line in text.splitlines() for part in line.split(",") if part.strip()]


def _closeouts(text: str) -> list[CloseoutDomain]:
    """Lines `domain[,age,backlinks,wayback,price]` (the closeout CSV's columns, in that order;
    an empty cell is unknown); a header line naming `domain` first is skipped."""
    entries = []
    # Strict: a quote never closed is refused, not every later line read into one cell
    rows = csv.reader(text.splitlines(), strict=True)
    try:
        read = [(rows.line_num, row) for row in rows]
    except csv.Error as error:
        raise ValueError(f"closeout line {rows.line_num}: {csv_problem(error)}") from None
    for number, row in read:
        cells = [cell.strip() for cell in row]
        if not any(cells) or cells[0].lower() == "domain":
            continue
        if len(cells) > len(CLOSEOUT_COLUMNS):
            raise ValueError(f"closeout line {number}: at most {len(CLOSEOUT_COLUMNS)} columns")
        values: dict[str, Any] = {}
        for name, cell in zip(CLOSEOUT_COLUMNS, cells, strict=False):
            if cell:
                values[name] = cell if name == "domain" else _number(number, name, cell)
        try:
            entries.append(CloseoutDomain.model_validate(values))
        except ValidationError as error:
            problem = "; ".join(issue["msg"] for issue in error.errors())
            raise ValueError(f"closeout line {number}: {problem}") from None
    return entries


def _number(line: int, column: str, text: str) -> float | int:
    """A closeout cell as the listing's number (whole for the counts)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"closeout line {line}: {column} {text!r} is not a number") from None
    if column in ("backlinks", "wayback"):
        if not value.is_integer():
            raise ValueError(f"closeout line {line}: {column} must be a whole number")
        return int(value)
    return value


@router.post("/runs")
async def start_run(request: Request, api: Services, web: Web) -> Response:
    fields = await form_fields(request)
    form = {name: first(fields, name) for name in ("keywords", "brandables", "closeouts")}
    try:
        run_input = RunInput(
            keywords=_names(form["keywords"]),
            brandable=_names(form["brandables"]),
            closeout=_closeouts(form["closeouts"]),
        )
    except ValueError as error:  # ValidationError is a ValueError
        messages = (
            [issue["msg"].removeprefix("Value error, ") for issue in error.errors()]
            if isinstance(error, ValidationError)
            else [str(error)]
        )
        return _runs_page(request, api, web, form=form, errors=messages, status_code=422)
    try:
        run = api.pipeline.submit(run_input)
    except ProviderChoiceError as error:  # e.g. names to register with the offline providers
        return _runs_page(request, api, web, form=form, errors=[str(error)], status_code=422)
    return see_other(f"/runs/{run.id}", "run-started")


# --- one run --------------------------------------------------------------------------------
def funnel(document: dict[str, Any], progress: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per stage: its status, candidates in (`total`), out (`passed`, once finished), how long
    it took against its budget (once finished) and, for the stage under way, how far it is."""
    rows = []
    for stage in STAGES:
        report = document["stages"].get(stage.value) or {}
        done = None
        if progress and progress.get("stage") == stage.value and report.get("status") == "running":
            done = progress.get("done")
        rows.append(
            {
                "stage": stage.value,
                "status": report.get("status", "waiting"),
                "in": report.get("total"),
                "out": report.get("passed"),
                "done": done,
                "reason": report.get("reason"),
                "seconds": report.get("seconds"),
                "budget_seconds": report.get("budget_seconds"),
            }
        )
    return rows


def read_run(api: ApiServices, run_id: int) -> RunState:
    run = api.runs.get_run(run_id)
    return run, job_of_run(api.store, run)


def render_funnel(web: Dashboard, request: Request, state: RunState) -> str:
    run, job = state
    document = dumped(RunOut.of(run, job))
    progress = job.progress if job is not None else None
    running = job is not None and not job.status.is_terminal
    return web.pages.fragment(
        "_run_funnel.html",
        request,
        run=document,
        funnel=funnel(document, progress),
        waiting=describe_wait(progress) if running else None,
    )


def _sorted(
    rows: list[dict[str, Any]], sort: str | None, order: str | None
) -> list[dict[str, Any]]:
    if sort not in SORTS:
        return rows  # the ranking: tier, then expected profit
    key, descending = SORTS[sort]
    if order in ("asc", "desc"):
        descending = order == "desc"

    def value(row: dict[str, Any]) -> Any:
        item = row.get(key)
        if key == "tier":
            return TIER_ORDER.get(str(item), 3)
        return item

    known = [row for row in rows if value(row) is not None]
    unknown = [row for row in rows if value(row) is None]
    known.sort(key=value, reverse=descending)
    return known + unknown  # unknown figures last, whichever way


def results_context(
    api: ApiServices, state: RunState, sort: str | None, order: str | None
) -> dict[str, Any]:
    run, job = state
    query = ListingQuery(limit=SHOWN_CANDIDATES)
    finished = is_finished(run, job)
    candidates = list(listing_documents(api.runs, run, query)) if finished else []
    dropped = [dumped(entry) for entry in dropped_candidates(api.runs, run)] if finished else []
    return {
        "run": dumped(RunOut.of(run, job)),
        "finished": is_finished(run, job),
        "candidates": _sorted(candidates, sort, order),
        "dropped": dropped[:SHOWN_CANDIDATES],
        "dropped_total": len(dropped),
        "sort": sort if sort in SORTS else None,
        "order": order,
        "sorts": SORTS,
        "shown_limit": SHOWN_CANDIDATES,
    }


SortParam = Annotated[str | None, Query(max_length=20)]


@router.get("/runs/{run_id}")
def run_page(
    request: Request,
    run_id: RunId,
    api: Services,
    web: Web,
    sort: SortParam = None,
    order: SortParam = None,
) -> Response:
    state = read_run(api, run_id)
    return web.pages.render(
        request,
        "run.html",
        title=f"Run {run_id}",
        funnel_html=render_funnel(web, request, state),
        notice=notice_text(request),
        **results_context(api, state, sort, order),
    )


@router.get("/runs/{run_id}/results")
def run_results(
    request: Request,
    run_id: RunId,
    api: Services,
    web: Web,
    sort: SortParam = None,
    order: SortParam = None,
) -> Response:
    """The results section alone: the page fetches it when the run's stream ends."""
    state = read_run(api, run_id)
    return web.pages.render(
        request, "_run_results.html", **results_context(api, state, sort, order)
    )


@router.get("/live/runs/{run_id}")
def run_live(request: Request, run_id: RunId, api: Services, web: Web) -> Response:
    first_state = read_run(api, run_id)  # 404 now, not inside the stream
    events = live_fragments(
        first_state,
        reread=lambda: read_run(api, run_id),
        limits=api.streams,
        render=lambda state: render_funnel(web, request, state),
        status=lambda state: effective_status(*state).value,
        finished=lambda state: is_finished(*state),
        name="run",
        ids={"run_id": run_id},
        gone=RunNotFoundError,
    )
    return DashboardStreamResponse(events, api.streams, web.streams)


@router.get("/runs/{run_id}/candidates.csv")
def run_csv(
    run_id: RunId, api: Services, include_dropped: bool = False, all_columns: bool = False
) -> Response:
    """The API's CSV export, for the page's download link (the cookie does not open /api/v1)."""
    listing = ListingParams(include_dropped=include_dropped)
    return run_candidates_csv(run_id, api, listing, None, all_columns)
