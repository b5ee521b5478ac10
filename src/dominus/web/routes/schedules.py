"""/schedules: next and last fire, last outcome; run now, enable, disable."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from dominus.api.services import Services
from dominus.jobs.documents import dumped
from dominus.web.context import Web
from dominus.web.routes.forms import notice_text, see_other

router = APIRouter()
ScheduleName = Annotated[str, Path(max_length=200)]


@router.get("/schedules")
def schedules(request: Request, api: Services, web: Web) -> Response:
    return web.pages.render(
        request,
        "schedules.html",
        title="Schedules",
        schedules=[dumped(schedule) for schedule in api.schedules.documents()],
        scheduler=api.scheduler_probe.health(),
        notice=notice_text(request),
    )


@router.post("/schedules/{name}/run")
def run_now(name: ScheduleName, api: Services) -> Response:
    result = api.schedules.run(name, api.queue)
    return see_other(
        f"/jobs/{result.job_id}", "schedule-run" if result.created else "schedule-already"
    )


@router.post("/schedules/{name}/enable")
def enable(name: ScheduleName, api: Services) -> Response:
    api.schedules.set_enabled(name, True)
    return see_other("/schedules", "enabled")


@router.post("/schedules/{name}/disable")
def disable(name: ScheduleName, api: Services) -> Response:
    api.schedules.set_enabled(name, False)
    return see_other("/schedules", "disabled")
