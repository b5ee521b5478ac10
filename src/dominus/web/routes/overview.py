"""/ (the overview) and its live part: the queue now, and the business state (renewals due this
week, open alerts, the next fire of every schedule, the latest runs)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from dominus.api.services import ApiServices, Services
from dominus.jobs.documents import dumped
from dominus.pipeline.documents import RunSummaryOut, job_of_run
from dominus.portfolio.documents import EntryOut
from dominus.portfolio.service import PortfolioService
from dominus.renewals.documents import AlertOut
from dominus.renewals.store import AlertStore
from dominus.web.charts import throughput_chart
from dominus.web.context import Dashboard, Web
from dominus.web.live import OVERVIEW_POLL_SECONDS, DashboardStreamResponse, live_fragments
from dominus.web.throughput import Throughput, reading

router = APIRouter()
SHOWN_RUNS = 5
RENEWALS_WITHIN_DAYS = 7  # "this week": the next seven days, past-due names included


@dataclass(frozen=True)
class OverviewState:
    now: datetime
    stats: dict[str, Any]
    throughput: Throughput


def overview_state(api: ApiServices, web: Dashboard) -> OverviewState:
    """The counts and the last hour's throughput (the counters read now close the last bar)."""
    now = api.now()
    current = reading(now, api.store.metric_totals())
    return OverviewState(now, dumped(api.stats()), web.throughput.throughput(current))


def render_live(web: Dashboard, request: Request, state: OverviewState) -> str:
    return web.pages.fragment(
        "_overview_live.html",
        request,
        stats=state.stats,
        throughput=state.throughput,
        chart=throughput_chart(state.throughput),
        now=state.now,
    )


@router.get("/")
def overview(request: Request, api: Services, web: Web) -> Response:
    state = overview_state(api, web)
    # Every schedule, the next to fire first (the disabled ones, with no next fire, last).
    schedules = [dumped(schedule) for schedule in api.schedules.documents()]
    schedules.sort(
        key=lambda schedule: (schedule["next_fire_at"] is None, schedule["next_fire_at"] or "")
    )
    runs = [
        dumped(RunSummaryOut.of(run, job_of_run(api.store, run)))
        for run in api.runs.list_runs(limit=SHOWN_RUNS)
    ]
    return web.pages.render(
        request,
        "overview.html",
        title="Overview",
        live=render_live(web, request, state),
        schedules=schedules,
        runs=runs,
        renewals=renewals_due(api),
        renewals_within=RENEWALS_WITHIN_DAYS,
        alerts=[dumped(AlertOut.of(alert)) for alert in AlertStore(api.runtime.engine).alerts()],
    )


def renewals_due(api: ApiServices) -> list[dict[str, Any]]:
    """Active names that renew within the week (or are past due), the nearest first, as the
    Portfolio page lists them."""
    service = PortfolioService(api.runtime.engine, api.runtime.settings)
    now = api.now()
    due = [
        dumped(EntryOut.of(entry, now, renewal=service.renewal_price(entry)))
        for entry in service.entries(status="active")
    ]
    due = [entry for entry in due if entry["days_until_renewal"] <= RENEWALS_WITHIN_DAYS]
    return sorted(due, key=lambda entry: (entry["days_until_renewal"], entry["domain"]))


@router.get("/live/overview")
def overview_live(request: Request, api: Services, web: Web) -> Response:
    first = overview_state(api, web)
    events = live_fragments(
        first,
        reread=lambda: overview_state(api, web),
        limits=api.streams,
        render=lambda state: render_live(web, request, state),
        status=lambda _state: "live",
        finished=lambda _state: False,
        name="overview",
        ids={},
        poll_seconds=OVERVIEW_POLL_SECONDS,
    )
    return DashboardStreamResponse(events, api.streams, web.streams)
