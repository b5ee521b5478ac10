"""/api/v1/schedules: list the cron schedules, run one now, enable or disable one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from dominus.api.routes.jobs import ERRORS, NO_STORE, job_out, with_errors
from dominus.api.services import Services
from dominus.jobs.documents import JobOut
from dominus.jobs.scheduling.documents import ScheduleOut

router = APIRouter(tags=["schedules"])
ScheduleName = Annotated[str, Path(description="The schedule's name.")]


@router.get("/schedules", response_model=list[ScheduleOut], responses=ERRORS)
def list_schedules(response: Response, api: Services) -> list[ScheduleOut]:
    """Every schedule: cron, zone, state, next and last fire, last job and its outcome."""
    response.headers.update(NO_STORE)
    return api.schedules.documents()


@router.post(
    "/schedules/{name}/run",
    status_code=202,
    response_model=JobOut,
    responses=with_errors(
        {200: {"model": JobOut, "description": "A pending or running job of the schedule"}}
    ),
)
def run(name: ScheduleName, response: Response, api: Services) -> JobOut:
    """Enqueue the schedule's job now: 202 with its `Location`; 200 with the schedule's job
    that is already pending or running. 409 when the schedule is off or inactive."""
    result = api.schedules.run(name, api.queue)
    response.headers["Location"] = f"/api/v1/jobs/{result.job_id}"
    if not result.created:
        response.status_code = 200
    return job_out(api.store.get_job(result.job_id))


@router.post("/schedules/{name}/enable", response_model=ScheduleOut, responses=ERRORS)
def enable(name: ScheduleName, api: Services) -> ScheduleOut:
    """Let the schedule fire again, from its next fire on; every running scheduler sees it at
    its next tick. 409 when the schedule is off."""
    return api.schedules.set_enabled(name, True)


@router.post("/schedules/{name}/disable", response_model=ScheduleOut, responses=ERRORS)
def disable(name: ScheduleName, api: Services) -> ScheduleOut:
    """Stop the schedule from firing, in every running scheduler, until enabled again."""
    return api.schedules.set_enabled(name, False)
