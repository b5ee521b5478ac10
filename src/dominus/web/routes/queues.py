"""/queues: each named queue's pending and running jobs; pause and resume."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from dominus.api.services import Services
from dominus.jobs.documents import QueueOut, dumped
from dominus.jobs.queues import QUEUE_NAME_PATTERN
from dominus.web.context import Web
from dominus.web.routes.forms import notice_text, see_other

router = APIRouter()
QueueName = Annotated[str, Path(pattern=QUEUE_NAME_PATTERN)]


@router.get("/queues")
def queues(request: Request, api: Services, web: Web) -> Response:
    return web.pages.render(
        request,
        "queues.html",
        title="Queues",
        queues=[dumped(QueueOut.of(queue)) for queue in api.queue.queues()],
        notice=notice_text(request),
    )


@router.post("/queues/{name}/pause")
def pause(name: QueueName, api: Services) -> Response:
    api.queue.pause(name)
    return see_other("/queues", "queue-paused")


@router.post("/queues/{name}/resume")
def resume(name: QueueName, api: Services) -> Response:
    api.queue.resume(name)
    return see_other("/queues", "queue-resumed")
