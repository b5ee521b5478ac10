"""Request bodies, and the responses that are the API's own (errors, health, pages). The jobs'
shapes are `dominus.jobs.documents`' models, the ones the CLI's `--json` dumps, so a script can
switch between the two."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict

from dominus.jobs.client import integral_floats_as_ints
from dominus.jobs.concurrency import CONCURRENCY_KEY_PATTERN, MAX_CONCURRENCY_LIMIT
from dominus.jobs.documents import JobSummaryOut
from dominus.jobs.queues import QUEUE_NAME_PATTERN
from dominus.jobs.rate_limit import KEY_PATTERN as RATE_KEY_PATTERN

_ISO_DATE_TIME_START = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]")


def _iso_8601_only(value: Any) -> Any:
    """Pydantic would also read `0.5` or `"1700000000"` as Unix times; the schema promises
    ISO 8601 date-times, and a number sent by mistake should be an error, not 1970."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _ISO_DATE_TIME_START.match(value):
        raise ValueError("must be an ISO 8601 date-time such as 2030-01-01T09:00:00Z")
    return value


IsoDateTime = Annotated[datetime, BeforeValidator(_iso_8601_only)]
# Strict (`false` is not a priority nor `"3"` a number of attempts: lax mode takes both), but
# `3.0` is 3, as JSON Schema has it.
_INTEGRAL = BeforeValidator(integral_floats_as_ints)
Priority = Annotated[int, Strict(), Field(ge=-1000, le=1000), _INTEGRAL]
MaxAttempts = Annotated[int, Strict(), Field(ge=1, le=1000), _INTEGRAL]
TimeoutSeconds = Annotated[float, Strict(), Field(gt=0, le=7 * 86_400)]
QueueName = Annotated[str, Strict(), Field(pattern=QUEUE_NAME_PATTERN)]
ConcurrencyKey = Annotated[str, Strict(), Field(pattern=CONCURRENCY_KEY_PATTERN)]
RateKey = Annotated[str, Strict(), Field(pattern=RATE_KEY_PATTERN)]
ConcurrencyLimit = Annotated[int, Strict(), Field(ge=1, le=MAX_CONCURRENCY_LIMIT), _INTEGRAL]


class ErrorDetail(BaseModel):
    code: str = Field(description="A stable, machine-readable code, e.g. `not_found`.")
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class EnqueueBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, max_length=200, strict=True, description="The job type.")
    payload: dict[str, Any] = Field(default_factory=dict, strict=True)
    priority: Priority | None = None
    max_attempts: MaxAttempts | None = None
    run_at: IsoDateTime | None = Field(
        default=None,
        description=(
            "Not before (with a UTC offset). A time in the past is due now; one whose UTC value"
            " falls before year 1 or after year 9999 is taken as the calendar's first or last"
            " instant."
        ),
    )
    dedupe_key: str | None = Field(default=None, min_length=1, max_length=300, strict=True)
    timeout_seconds: TimeoutSeconds | None = None
    queue: QueueName | None = Field(
        default=None, description="The named queue (default: the job type's, usually `default`)."
    )
    concurrency_key: ConcurrencyKey | None = Field(
        default=None,
        description="At most `concurrency_limit` jobs with this key run at once, on every worker "
        "(default: the job type's key, usually none).",
    )
    concurrency_limit: ConcurrencyLimit | None = Field(
        default=None,
        description="The key's limit (default: CONCURRENCY_LIMITS' longest matching prefix, "
        "else the job type's, else 1). Needs a key.",
    )
    rate_key: RateKey | None = Field(
        default=None,
        description="Each run first takes a token from this rate limiter (RATE_LIMITS; a key "
        "with no limit configured is unlimited, but honours pauses), or waits for one without "
        "spending an attempt.",
    )


class JobPage(BaseModel):
    items: list[JobSummaryOut]
    next_cursor: int | None = Field(
        default=None, description="Pass as `cursor` for the next (older) page; null at the end."
    )


class SchedulerHealthOut(BaseModel):
    status: str = Field(
        description="ok: a running scheduler ticked within two minutes; stale: none did; "
        "none: no scheduler ever ran; unknown: the database did not say (in time)."
    )
    last_tick_at: str | None = Field(default=None, description="The latest tick of any scheduler.")


class HealthOut(BaseModel):
    status: str
    scheduler: SchedulerHealthOut


class ReadyOut(BaseModel):
    status: str
    database: str
    schema_revision: str | None = None
