"""/api/v1/health, /api/v1/ready, /api/v1/metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from dominus.api.prometheus import render
from dominus.api.routes.jobs import NO_STORE
from dominus.api.schemas import ErrorBody, HealthOut, ReadyOut, SchedulerHealthOut
from dominus.api.services import ApiServices, Services
from dominus.schema.migrate import current_revision, ensure_migrated

router = APIRouter(tags=["operations"])


@router.get("/health", response_model=HealthOut)
def health(request: Request, response: Response) -> HealthOut:
    """The process is up, and the schedulers' last tick. Always 200: the tick is read at most
    every 2 s and waited for at most 0.5 s; without an answer it is `unknown`."""
    response.headers.update(NO_STORE)
    api: ApiServices = request.app.state.services  # no schema gate: health answers regardless
    tick = api.scheduler_probe.health()
    last = None if tick.last_tick_at is None else tick.last_tick_at.isoformat()
    return HealthOut(
        status="ok", scheduler=SchedulerHealthOut(status=tick.status, last_tick_at=last)
    )


@router.get("/ready", response_model=ReadyOut, responses={503: {"model": ErrorBody}})
def ready(response: Response, api: Services) -> ReadyOut:
    """The database is reachable and migrated to this version (503 otherwise)."""
    response.headers.update(NO_STORE)
    engine = api.runtime.engine
    ensure_migrated(engine)
    return ReadyOut(
        status="ready",
        database=engine.dialect.name,
        schema_revision=current_revision(engine),
    )


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}, 503: {"model": ErrorBody}},
)
def metrics(api: Services) -> Response:
    """Prometheus text format."""
    return Response(render(api), media_type=CONTENT_TYPE_LATEST, headers=NO_STORE)
