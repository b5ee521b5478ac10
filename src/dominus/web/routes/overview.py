"""/ (the overview) and its live part."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from dominus.api.services import ApiServices, Services
from dominus.jobs.documents import dumped
from dominus.pipeline.documents import RunSummaryOut, job_of_run
from dominus.web.charts import throughput_chart
from dominus.web.context import Dashboard, Web
from dominus.web.live import OVERVIEW_POLL_SECONDS, DashboardStreamResponse, live_fragments
from dominus.web.throughput import Throughput, reading

router = APIRouter()
SHOWN_SCHEDULES = 5
SHOWN_RUNS = 5


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
    schedules = [dumped(s) for s in api.schedules.documents() if s.next_fire_at]
    schedules.sort(key=lambda schedule: schedule["next_fire_at"])
    runs = [
        dumped(RunSummaryOut.of(run, job_of_run(api.store, run)))
        for run in api.runs.list_runs(limit=SHOWN_RUNS)
    ]
    return web.pages.render(
        request,
        "overview.html",
        title="Overview",
        live=render_live(web, request, state),
        schedules=schedules[:SHOWN_SCHEDULES],
        runs=runs,
    )


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
