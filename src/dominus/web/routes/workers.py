"""/workers: live and recently dead workers, their running jobs, heartbeat age (live)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from dominus.api.services import ApiServices, Services
from dominus.jobs.documents import dumped
from dominus.web.context import Dashboard, Web
from dominus.web.live import OVERVIEW_POLL_SECONDS, DashboardStreamResponse, live_fragments

router = APIRouter()
DEAD_WITHIN_HOURS = 24


@dataclass(frozen=True)
class WorkersState:
    now: datetime
    workers: list[dict[str, Any]]


def workers_state(api: ApiServices) -> WorkersState:
    return WorkersState(api.now(), [dumped(worker) for worker in api.workers(DEAD_WITHIN_HOURS)])


def render_live(web: Dashboard, request: Request, state: WorkersState) -> str:
    return web.pages.fragment(
        "_workers_live.html", request, workers=state.workers, now=state.now, hours=DEAD_WITHIN_HOURS
    )


@router.get("/workers")
def workers(request: Request, api: Services, web: Web) -> Response:
    return web.pages.render(
        request, "workers.html", title="Workers", live=render_live(web, request, workers_state(api))
    )


@router.get("/live/workers")
def workers_live(request: Request, api: Services, web: Web) -> Response:
    events = live_fragments(
        workers_state(api),
        reread=lambda: workers_state(api),
        limits=api.streams,
        render=lambda state: render_live(web, request, state),
        status=lambda _state: "live",
        finished=lambda _state: False,
        name="workers",
        ids={},
        poll_seconds=OVERVIEW_POLL_SECONDS,
    )
    return DashboardStreamResponse(events, api.streams, web.streams)
