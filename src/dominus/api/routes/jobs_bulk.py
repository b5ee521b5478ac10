"""/api/v1/jobs/bulk: retry, cancel or delete many jobs at once, named by id or by a filter
(ADR 0054). One request acts on at most `BULK_CAP` jobs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Strict, Tag

from dominus.api.routes.jobs import TOO_LARGE, utc_filter, with_errors
from dominus.api.schemas import ErrorBody, IsoDateTime
from dominus.api.services import ApiServices, Services
from dominus.errors import InvalidTransitionError
from dominus.jobs.bulk_plan import BulkPlan, plan_ids, plan_selection
from dominus.jobs.client import integral_floats_as_ints
from dominus.jobs.model import JobStatus
from dominus.jobs.selection import (
    BULK_CAP,
    SEARCH_MAX_LENGTH,
    BulkAction,
    JobSelection,
    Waiting,
)

router = APIRouter(tags=["jobs"])
# No upper bound: an id past the largest a row can have names no job, and is skipped as such.
# `3.0` is 3, as JSON Schema has it (the enqueue body's numbers read the same way).
JobIdItem = Annotated[int, Strict(), Field(ge=1), BeforeValidator(integral_floats_as_ints)]
REFUSALS_NAMED = 5  # running jobs named in a refused delete's message


class BulkFilter(BaseModel):
    """The jobs `GET /jobs` would list with these filters (every field narrows it)."""

    model_config = ConfigDict(extra="forbid")

    status: JobStatus | None = None
    waiting: Waiting | None = Field(
        default=None,
        description="Pending jobs only, by why they wait: `due` (their run time has come), "
        "`scheduled` (ahead, no failed attempt), `retrying` (waiting out a retry backoff); "
        "with a `status` other than pending, nothing matches.",
    )
    type: str | None = Field(default=None, min_length=1, max_length=200, strict=True)
    search: str | None = Field(
        default=None,
        min_length=1,
        max_length=SEARCH_MAX_LENGTH,
        strict=True,
        description="A substring of the payload (as JSON) or of the last error, in any case.",
    )
    created_after: IsoDateTime | None = None
    created_before: IsoDateTime | None = None

    def selection(self) -> JobSelection:
        return JobSelection(
            status=self.status,
            job_type=self.type,
            waiting=self.waiting,
            search=self.search,
            created_after=utc_filter("filter.created_after", self.created_after, "body"),
            created_before=utc_filter("filter.created_before", self.created_before, "body"),
        )


ACTION_FIELD = Field(
    description="`retry` (failed or cancelled jobs), `cancel` (pending or running ones), "
    "`delete` (any job but a running one: cancel those)."
)


class BulkByIds(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: BulkAction = ACTION_FIELD
    ids: list[JobIdItem] = Field(
        min_length=1, max_length=BULK_CAP, description=f"The jobs, by id: 1 to {BULK_CAP:,}."
    )


class BulkByFilter(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: BulkAction = ACTION_FIELD
    filter: BulkFilter = Field(
        description=f"The filter's jobs the action applies to, the oldest {BULK_CAP:,} of them "
        "(`beyond_cap` says how many are left for another request)."
    )


def _form(value: Any) -> str:
    """Which of the two bodies a request is, so that its errors are that body's alone: a filter
    when it names one (and no ids), else ids."""
    named = value if isinstance(value, dict) else {}
    return "by_filter" if "filter" in named and "ids" not in named else "by_ids"


# Either ids or a filter, never both: two shapes in the schema, so a client's generator (and a
# reader) sees the rule.
BulkBody = Annotated[
    Annotated[BulkByIds, Tag("by_ids")] | Annotated[BulkByFilter, Tag("by_filter")],
    Discriminator(_form),
]


class SkippedJob(BaseModel):
    id: int
    reason: str


class BulkOut(BaseModel):
    action: BulkAction
    matched: int = Field(description="Jobs named that the action applies to.")
    done: list[int] = Field(description="The jobs the action changed, by id.")
    skipped: list[SkippedJob] = Field(
        description="Jobs named by id that it left (gone, or in a state it does not take), "
        "and jobs whose state changed before it reached them."
    )
    excluded: int = Field(description="A filter's jobs in states the action does not take.")
    beyond_cap: int = Field(description="A filter's jobs left for another request.")
    cap: int = Field(default=BULK_CAP, description="The most jobs one request acts on.")


@router.post(
    "/jobs/bulk",
    response_model=BulkOut,
    responses=with_errors(
        TOO_LARGE | {400: {"model": ErrorBody, "description": "A body that is not even text"}}
    ),
)
def bulk(body: BulkBody, api: Services) -> BulkOut:
    """Retry, cancel or delete many jobs in one transaction, each as its one-job endpoint
    does. A delete that names a running job by id is refused (409) and deletes nothing: cancel
    it instead."""
    plan = _plan(api, body)
    if body.action is BulkAction.DELETE:
        _refuse_running(plan)
    outcome = api.queue.bulk(body.action, plan.ids) if plan.ids else None
    skipped = dict(plan.refused) | (outcome.skipped if outcome else {})
    return BulkOut(
        action=body.action,
        matched=plan.matched,
        done=outcome.done if outcome else [],
        skipped=[SkippedJob(id=job_id, reason=why) for job_id, why in sorted(skipped.items())],
        excluded=plan.excluded,
        beyond_cap=plan.beyond_cap,
    )


@router.api_route("/jobs/bulk", methods=["GET", "PUT", "PATCH", "DELETE"], include_in_schema=False)
def not_a_job() -> None:
    """`/jobs/bulk` is not job "bulk" of `GET /jobs/{job_id}`: other methods than POST are
    405 here (with `Allow: POST`), not a 422 about an id."""
    raise HTTPException(405, "Method Not Allowed")


def _plan(api: ApiServices, body: BulkBody) -> BulkPlan:
    if isinstance(body, BulkByIds):
        return plan_ids(api.store, body.action, body.ids)
    return plan_selection(api.store, body.action, body.filter.selection(), api.now())


def _refuse_running(plan: BulkPlan) -> None:
    running = plan.running
    if running:
        named = ", ".join(str(job_id) for job_id in running[:REFUSALS_NAMED])
        more = f" and {len(running) - REFUSALS_NAMED} more" if len(running) > REFUSALS_NAMED else ""
        raise InvalidTransitionError(
            f"running jobs cannot be deleted (job {named}{more}): cancel them instead "
            '(`"action": "cancel"`); nothing was deleted'
        )
