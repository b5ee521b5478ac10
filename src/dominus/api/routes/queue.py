"""/api/v1/queue/stats and /api/v1/workers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from dominus.api.routes.jobs import ERRORS, NO_STORE
from dominus.api.services import Services
from dominus.jobs.documents import StatsOut, WorkerOut

router = APIRouter(tags=["queue"])


@router.get("/queue/stats", response_model=StatsOut, responses=ERRORS)
def stats(response: Response, api: Services) -> StatsOut:
    """Counts by status and type, dead-letter size, oldest pending age, live workers."""
    response.headers.update(NO_STORE)
    return api.stats()


@router.get("/workers", response_model=list[WorkerOut], responses=ERRORS)
def workers(
    response: Response,
    api: Services,
    dead_within_hours: Annotated[float, Query(ge=0, le=24 * 365)] = 24,
) -> list[WorkerOut]:
    """Live workers and those that stopped or went silent within `dead_within_hours`, each
    with the ids of the jobs it is running."""
    response.headers.update(NO_STORE)
    return api.workers(dead_within_hours)
