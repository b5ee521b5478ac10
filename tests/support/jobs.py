"""Jobs for the store tests: a new job, one claimed at T0, a failed attempt, a job's events."""

from __future__ import annotations

from datetime import timedelta

from dominus.jobs import EventKind, Job, JobStore
from dominus.jobs.model import (
    AttemptOutcome,
    Claim,
    Failed,
    NewJob,
)
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


def fail(claim: Claim, message: str = "boom", retry_in: float = 10) -> AttemptOutcome:
    return Failed(
        claim,
        error=message,
        traceback=f"Traceback: {message}",
        retry_at=T0 + timedelta(seconds=retry_in),
    )


def kinds(store: JobStore, job_id: int) -> list[EventKind]:
    return [event.kind for event in store.job_events(job_id)]
