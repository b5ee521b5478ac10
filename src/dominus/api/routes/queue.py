"""/api/v1/queue/stats and /api/v1/workers."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from dominus.api.routes.jobs import ERRORS, NO_STORE
from dominus.api.schemas import StatsOut, WorkerOut
from dominus.api.services import ApiServices, services
from dominus.jobs.documents import stats_document, worker_document
from dominus.jobs.model import JobStatus

router = APIRouter(tags=["queue"])
Services = Annotated[ApiServices, Depends(services)]
RUNNING_JOBS_LISTED = 10_000


@router.get("/queue/stats", response_model=StatsOut, responses=ERRORS)
def stats(response: Response, api: Services) -> StatsOut:
    """Counts by status and type, dead-letter size, oldest pending age, live workers."""
    response.headers.update(NO_STORE)
    return StatsOut.model_validate(
        stats_document(api.store.queue_stats(api.now(), alive_since=api.alive_since()))
    )


@router.get("/workers", response_model=list[WorkerOut], responses=ERRORS)
def workers(
    response: Response,
    api: Services,
    dead_within_hours: Annotated[float, Query(ge=0, le=24 * 365)] = 24,
) -> list[WorkerOut]:
    """Live workers and those that stopped or went silent within `dead_within_hours`, each
    with the ids of the jobs it is running."""
    response.headers.update(NO_STORE)
    now = api.now()
    alive_since = api.alive_since()
    recent = now - timedelta(hours=dead_within_hours)
    running: defaultdict[str, list[int]] = defaultdict(list)
    for job in api.store.list_jobs(status=JobStatus.RUNNING, limit=RUNNING_JOBS_LISTED):
        if job.locked_by:
            running[job.locked_by].append(job.id)
    listed = []
    for worker in api.store.list_workers():
        alive = worker.stopped_at is None and worker.last_seen_at >= alive_since
        if not alive and worker.last_seen_at < recent:
            continue
        listed.append(
            WorkerOut.model_validate(
                worker_document(worker)
                | {"alive": alive, "running_jobs": sorted(running.get(worker.id, []))}
            )
        )
    return listed
