"""The stable JSON shapes of jobs, their events, dead-letter entries, workers and queue stats:
one pydantic model each, which the HTTP API returns and the CLI's `--json` dumps
(`model_dump(mode="json")`), so a script can switch between the two. Keys may be added;
existing keys keep their meaning. Timestamps are ISO 8601 strings with a UTC offset."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.jobs.model import (
    AttemptError,
    DeadLetterEntry,
    Job,
    JobEvent,
    JobStatus,
    QueueState,
    QueueStats,
    WorkerInfo,
)
from dominus.jobs.rate_limit import KeyState


class OutModel(BaseModel):
    """The base of these shapes. A command uses one or two of them (often none: `queue stats`
    without `--json` prints a table), so each builds its validator and serializer the first
    time it is used rather than at import, which cost every command about 25 ms."""

    model_config = ConfigDict(defer_build=True)


def timestamp(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _required_timestamp(value: datetime) -> str:
    return value.isoformat()


class JobSummaryOut(OutModel):
    """A job in a listing: everything but its payload and result (`GET /jobs/{id}` has them)."""

    id: int
    type: str
    status: JobStatus
    priority: int
    attempts: int
    max_attempts: int
    failure_count: int
    last_error: str | None = None
    progress: dict[str, Any] | None = None
    dedupe_key: str | None = None
    timeout_seconds: float | None = None
    queue: str = "default"
    concurrency_key: str | None = None
    concurrency_limit: int | None = None
    rate_key: str | None = None
    created_at: str
    updated_at: str
    run_at: str
    started_at: str | None = None
    finished_at: str | None = None
    heartbeat_at: str | None = None
    cancel_requested_at: str | None = None
    locked_by: str | None = None

    @classmethod
    def fields_of(cls, job: Job) -> dict[str, Any]:
        return {
            "id": job.id,
            "type": job.job_type,
            "status": job.status,
            "priority": job.priority,
            "attempts": job.attempts,
            "max_attempts": job.max_attempts,
            "failure_count": job.failure_count,
            "last_error": job.last_error,
            "progress": job.progress,
            "dedupe_key": job.dedupe_key,
            "timeout_seconds": job.timeout_seconds,
            "queue": job.queue,
            "concurrency_key": job.concurrency_key,
            "concurrency_limit": job.concurrency_limit,
            "rate_key": job.rate_key,
            "created_at": _required_timestamp(job.created_at),
            "updated_at": _required_timestamp(job.updated_at),
            "run_at": _required_timestamp(job.run_at),
            "started_at": timestamp(job.started_at),
            "finished_at": timestamp(job.finished_at),
            "heartbeat_at": timestamp(job.heartbeat_at),
            "cancel_requested_at": timestamp(job.cancel_requested_at),
            "locked_by": job.locked_by,
        }

    @classmethod
    def of(cls, job: Job) -> JobSummaryOut:
        return cls(**cls.fields_of(job))


class JobOut(JobSummaryOut):
    payload: dict[str, Any]
    result: Any = None

    @classmethod
    def of(cls, job: Job) -> JobOut:
        return cls(**cls.fields_of(job), payload=job.payload, result=job.result)


class EventOut(OutModel):
    id: int
    kind: str
    at: str
    attempt: int | None = None
    worker_id: str | None = None
    message: str | None = None
    details: dict[str, Any] | None = None

    @classmethod
    def of(cls, event: JobEvent) -> EventOut:
        return cls(
            id=event.id,
            kind=event.kind.value,
            at=_required_timestamp(event.at),
            attempt=event.attempt,
            worker_id=event.worker_id,
            message=event.message,
            details=event.details,
        )


class JobWithEventsOut(JobOut):
    """`jobs show --json`: the job and its events, oldest first."""

    events: list[EventOut]

    @classmethod
    def of_events(cls, job: Job, events: Sequence[JobEvent]) -> JobWithEventsOut:
        return cls(
            **cls.fields_of(job),
            payload=job.payload,
            result=job.result,
            events=[EventOut.of(event) for event in events],
        )


class EnqueuedJobOut(JobOut):
    """`enqueue --json` and `schedules run --json`: the job, and whether it is a new one."""

    created: bool = Field(description="false: an active job with the same dedupe key.")

    @classmethod
    def enqueued(cls, job: Job, created: bool) -> EnqueuedJobOut:
        return cls(**cls.fields_of(job), payload=job.payload, result=job.result, created=created)


class AttemptErrorOut(OutModel):
    attempt: int | None = None
    message: str
    traceback: str | None = None
    at: str | None = None

    @classmethod
    def of(cls, error: AttemptError) -> AttemptErrorOut:
        return cls(
            attempt=error.attempt,
            message=error.message,
            traceback=error.traceback,
            at=timestamp(error.at),
        )


class DeadLetterOut(OutModel):
    id: int
    job_id: int
    job_type: str
    payload: dict[str, Any]
    attempts: int
    last_error: str | None = None
    errors: list[AttemptErrorOut]
    failed_at: str
    requeued_at: str | None = None

    @classmethod
    def of(cls, entry: DeadLetterEntry) -> DeadLetterOut:
        return cls(
            id=entry.id,
            job_id=entry.job_id,
            job_type=entry.job_type,
            payload=entry.payload,
            attempts=entry.attempts,
            last_error=entry.last_error,
            errors=[AttemptErrorOut.of(error) for error in entry.errors],
            failed_at=_required_timestamp(entry.failed_at),
            requeued_at=timestamp(entry.requeued_at),
        )


class PurgeOut(OutModel):
    purged: int


class WorkerInfoOut(OutModel):
    """A worker as its row has it (`queue stats --json` lists the live ones)."""

    id: str
    hostname: str
    pid: int
    concurrency: int
    job_types: list[str]
    started_at: str
    last_seen_at: str
    stopped_at: str | None = None

    @classmethod
    def fields_of(cls, worker: WorkerInfo) -> dict[str, Any]:
        return {
            "id": worker.id,
            "hostname": worker.hostname,
            "pid": worker.pid,
            "concurrency": worker.concurrency,
            "job_types": worker.job_types,
            "started_at": _required_timestamp(worker.started_at),
            "last_seen_at": _required_timestamp(worker.last_seen_at),
            "stopped_at": timestamp(worker.stopped_at),
        }

    @classmethod
    def of(cls, worker: WorkerInfo) -> WorkerInfoOut:
        return cls(**cls.fields_of(worker))


class WorkerOut(WorkerInfoOut):
    """`GET /workers`: the worker, whether it is alive, and the jobs it is running."""

    alive: bool
    running_jobs: list[int]

    @classmethod
    def with_jobs(cls, worker: WorkerInfo, alive: bool, running_jobs: list[int]) -> WorkerOut:
        return cls(**cls.fields_of(worker), alive=alive, running_jobs=running_jobs)


class QueueOut(OutModel):
    """A named queue: paused or not, and its active jobs."""

    name: str
    paused: bool
    paused_at: str | None = None
    pending: int
    running: int

    @classmethod
    def of(cls, queue: QueueState) -> QueueOut:
        return cls(
            name=queue.name,
            paused=queue.paused,
            paused_at=timestamp(queue.paused_at),
            pending=queue.pending,
            running=queue.running,
        )


class RateLimitKeyOut(OutModel):
    """A rate-limit key shared by every process (ADR 0053): its limit, if any, and its pause,
    while one lasts."""

    key: str
    limit: str | None = Field(None, description='The limit as configured, e.g. "10/s".')
    limit_count: int | None = None
    period_seconds: float | None = None
    paused: bool
    paused_until: str | None = None
    pause_reason: str | None = None
    updated_at: str
    brought_forward: int = Field(
        0, description="After a resume: the waiting jobs it made due at once (else 0)."
    )

    @classmethod
    def of(cls, state: KeyState) -> RateLimitKeyOut:
        limit = state.limit
        return cls(
            key=state.key,
            limit=None if limit is None else str(limit),
            limit_count=None if limit is None else limit.count,
            period_seconds=None if limit is None else limit.period_seconds,
            paused=state.paused,
            paused_until=timestamp(state.paused_until),
            pause_reason=state.pause_reason,
            updated_at=_required_timestamp(state.updated_at),
            brought_forward=state.brought_forward,
        )


class StatsOut(OutModel):
    by_status: dict[str, int]
    by_type: dict[str, dict[str, int]]
    dead_letter: int
    oldest_pending_age_seconds: float | None = Field(
        default=None,
        description="Since the oldest pending job was created, jobs scheduled ahead or waiting "
        "out a retry backoff included.",
    )
    latency_seconds: float | None = Field(
        default=None,
        description="The queue's latency: how long the longest-waiting pending job that is due "
        "(run_at reached) has waited since it became due; null when none is due.",
    )
    workers_alive: int
    queues: list[QueueOut] = Field(default_factory=list)

    @classmethod
    def fields_of(cls, stats: QueueStats) -> dict[str, Any]:
        return {
            "by_status": stats.by_status,
            "by_type": stats.by_type,
            "dead_letter": stats.dead_letter,
            "oldest_pending_age_seconds": stats.oldest_pending_age_seconds,
            "latency_seconds": stats.latency_seconds,
            "workers_alive": stats.workers_alive,
            "queues": [QueueOut.of(queue) for queue in stats.queues],
        }

    @classmethod
    def of(cls, stats: QueueStats) -> StatsOut:
        return cls(**cls.fields_of(stats))


class StatsWithWorkersOut(StatsOut):
    """`queue stats --json`: the counts and the live workers."""

    workers: list[WorkerInfoOut]

    @classmethod
    def with_workers(cls, stats: QueueStats, workers: Sequence[WorkerInfo]) -> StatsWithWorkersOut:
        return cls(**cls.fields_of(stats), workers=[WorkerInfoOut.of(worker) for worker in workers])


def dumped(model: BaseModel) -> dict[str, Any]:
    """The model as the JSON document it is (by its JSON names), for printing or a template."""
    return model.model_dump(mode="json", by_alias=True)
