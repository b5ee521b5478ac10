"""/api/v1/queue/stats, /api/v1/queues (list, pause, resume) and /api/v1/workers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from dominus.api.routes.jobs import ERRORS, NO_STORE
from dominus.api.services import Services
from dominus.jobs.documents import QueueOut, StatsOut, WorkerOut
from dominus.jobs.queues import QUEUE_NAME_PATTERN

router = APIRouter(tags=["queue"])
QueueName = Annotated[
    str, Path(pattern=QUEUE_NAME_PATTERN, description="The queue's name: 1 to 64 of a-z0-9_.-")
]


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


@router.get("/queues", response_model=list[QueueOut], responses=ERRORS)
def queues(response: Response, api: Services) -> list[QueueOut]:
    """Every queue with active jobs or a pause state, and `default`: paused or not, with its
    pending and running jobs."""
    response.headers.update(NO_STORE)
    return [QueueOut.of(queue) for queue in api.queue.queues()]


@router.post("/queues/{name}/pause", response_model=QueueOut, responses=ERRORS)
def pause(name: QueueName, api: Services) -> QueueOut:
    """No worker on any host claims the queue's jobs from now on; running ones finish. A queue
    need not exist first; pausing a paused queue changes nothing."""
    return QueueOut.of(api.queue.pause(name))


@router.post("/queues/{name}/resume", response_model=QueueOut, responses=ERRORS)
def resume(name: QueueName, api: Services) -> QueueOut:
    """The queue's due jobs are claimed again."""
    return QueueOut.of(api.queue.resume(name))
