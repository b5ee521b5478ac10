"""Request and response bodies. Responses mirror the CLI's `--json` documents
(`dominus.jobs.documents`), so a script can switch between the two."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.jobs.model import JobStatus


class ErrorDetail(BaseModel):
    code: str = Field(description="A stable, machine-readable code, e.g. `not_found`.")
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


class EnqueueBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1, max_length=200, description="The job type.")
    payload: dict[str, Any] = Field(default_factory=dict)
    priority: int | None = Field(default=None, ge=-1000, le=1000)
    max_attempts: int | None = Field(default=None, ge=1, le=1000)
    run_at: datetime | None = Field(default=None, description="Not before (with a UTC offset).")
    dedupe_key: str | None = Field(default=None, min_length=1, max_length=300)
    timeout_seconds: float | None = Field(default=None, gt=0, le=7 * 86_400)


class JobOut(BaseModel):
    id: int
    type: str
    status: JobStatus
    priority: int
    attempts: int
    max_attempts: int
    failure_count: int
    payload: dict[str, Any]
    result: Any = None
    last_error: str | None = None
    progress: dict[str, Any] | None = None
    dedupe_key: str | None = None
    timeout_seconds: float | None = None
    created_at: str
    updated_at: str
    run_at: str
    started_at: str | None = None
    finished_at: str | None = None
    heartbeat_at: str | None = None
    cancel_requested_at: str | None = None
    locked_by: str | None = None


class JobPage(BaseModel):
    items: list[JobOut]
    next_cursor: int | None = Field(
        default=None, description="Pass as `cursor` for the next (older) page; null at the end."
    )


class EventOut(BaseModel):
    id: int
    kind: str
    at: str
    attempt: int | None = None
    worker_id: str | None = None
    message: str | None = None
    details: dict[str, Any] | None = None


class AttemptErrorOut(BaseModel):
    attempt: int | None = None
    message: str
    traceback: str | None = None
    at: str | None = None


class DeadLetterOut(BaseModel):
    id: int
    job_id: int
    job_type: str
    payload: dict[str, Any]
    attempts: int
    last_error: str | None = None
    errors: list[AttemptErrorOut]
    failed_at: str
    requeued_at: str | None = None


class PurgeOut(BaseModel):
    purged: int


class WorkerOut(BaseModel):
    id: str
    hostname: str
    pid: int
    concurrency: int
    job_types: list[str]
    started_at: str
    last_seen_at: str
    stopped_at: str | None = None
    alive: bool
    running_jobs: list[int]


class StatsOut(BaseModel):
    by_status: dict[str, int]
    by_type: dict[str, dict[str, int]]
    dead_letter: int
    oldest_pending_age_seconds: float | None = None
    workers_alive: int


class HealthOut(BaseModel):
    status: str


class ReadyOut(BaseModel):
    status: str
    database: str
    schema_revision: str | None = None
