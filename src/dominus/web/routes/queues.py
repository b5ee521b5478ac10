"""/queues: each named queue's pending and running jobs; pause and resume. And the rate-limit
keys paused now (ADR 0053), each with when it resumes and a button to resume it early."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from dominus.api.services import Services
from dominus.jobs.documents import QueueOut, RateLimitKeyOut, dumped
from dominus.jobs.queues import QUEUE_NAME_PATTERN
from dominus.jobs.rate_limit import KEY_PATTERN
from dominus.web.context import Web
from dominus.web.routes.forms import notice_text, see_other

router = APIRouter()
QueueName = Annotated[str, Path(pattern=QUEUE_NAME_PATTERN)]
Key = Annotated[str, Path(pattern=KEY_PATTERN)]


@router.get("/queues")
def queues(request: Request, api: Services, web: Web) -> Response:
    return web.pages.render(
        request,
        "queues.html",
        title="Queues",
        queues=[dumped(QueueOut.of(queue)) for queue in api.queue.queues()],
        keys=[dumped(RateLimitKeyOut.of(key)) for key in api.runtime.limiters.list() if key.paused],
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


@router.post("/keys/{key}/resume")
def resume_key(key: Key, api: Services) -> Response:
    api.runtime.limiters.resume(key)
    return see_other("/queues", "key-resumed")
