"""Jobs for the store and worker tests: a new job, one claimed at T0 (from a store, or made as a
claim makes it), an attempt of it, a failed attempt, a job's events."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from dominus.jobs import EventKind, Job, JobStore
from dominus.jobs.abort import AbortSignal
from dominus.jobs.execution import AttemptServices, RunningJob
from dominus.jobs.model import (
    AttemptOutcome,
    Claim,
    Failed,
    JobStatus,
    NewJob,
)
from dominus.jobs.registry import JobType
from tests.support.clock import T0


def new_job(
    job_type: str = "diag.noop",
    *,
    priority: int = 0,
    run_at_offset: float = 0,
    dedupe_key: str | None = None,
    max_attempts: int = 3,
) -> NewJob:
    return NewJob(
        job_type=job_type,
        payload={"n": 1},
        priority=priority,
        max_attempts=max_attempts,
        run_at=T0 + timedelta(seconds=run_at_offset),
        dedupe_key=dedupe_key,
    )


def claimed_job(store: JobStore, *, max_attempts: int = 3, worker: str = "w1") -> Job:
    store.enqueue([new_job(max_attempts=max_attempts)], T0)
    [job] = store.claim(worker, ["diag.noop"], 1, T0)
    return job


def running_job(job_id: int, job_type: str, *, at: datetime, **changes: Any) -> Job:
    """A job as worker-1's claim at `at` hands it out (an empty payload unless `changes` give
    one), its first attempt."""
    return Job(
        **{
            "id": job_id,
            "job_type": job_type,
            "payload": {},
            "status": JobStatus.RUNNING,
            "priority": 0,
            "attempts": 1,
            "max_attempts": 3,
            "failure_count": 0,
            "run_at": at,
            "created_at": at,
            "updated_at": at,
            "locked_by": "worker-1",
            **changes,
        }
    )


def attempt_of(job: Job, job_type: JobType[Any], *, claimed_at: datetime) -> RunningJob:
    """A worker's attempt of a claimed `job`, waiting for its handler: no store (no handler
    transactions), progress accepted and dropped."""
    return RunningJob(
        job=job,
        claim=job.claim,
        job_type=job_type,
        abort=AbortSignal(),
        claimed_at=claimed_at,
        services=AttemptServices(
            store=None,
            progress_sink=lambda *_: True,
            clock=lambda: claimed_at,
            progress_interval_seconds=1.0,
        ),
    )


def fail(claim: Claim, message: str = "boom", retry_in: float = 10) -> AttemptOutcome:
    return Failed(
        claim,
        error=message,
        traceback=f"Traceback: {message}",
        retry_at=T0 + timedelta(seconds=retry_in),
    )


def kinds(store: JobStore, job_id: int) -> list[EventKind]:
    return [event.kind for event in store.job_events(job_id)]
