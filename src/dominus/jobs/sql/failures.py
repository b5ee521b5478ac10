"""Ending an attempt as a failure: shared by a worker reporting an exception or timeout and by a
reaper reclaiming a stale job. Either way the attempt counts: back to pending (not before the
retry time) while attempts remain, else failed with a dead-letter entry, in one transaction. A
permanent failure (the handler raised PermanentJobError) ends the job as if it were the last
attempt."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, case, func, literal, true, update

from dominus.db.types import UTCDateTime
from dominus.jobs.model import Claim, EventKind
from dominus.jobs.sql import metrics
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.history import dead_letter, record_event, record_retry_scheduled
from dominus.jobs.sql.predicates import fenced
from dominus.jobs.sql.tables import Document, job_queue


@dataclass(frozen=True)
class FailedAttempt:
    claim: Claim
    kind: EventKind  # FAILED (reported by the worker) or RECLAIMED (taken back by a reaper)
    message: str
    retry_at: datetime
    traceback: str | None = None
    progress: dict[str, Any] | None = None
    permanent: bool = False  # no retry, whatever attempts remain
    # How long after it became due the attempt started (None: unknown, as for a reclaim).
    pickup_seconds: float | None = None


@dataclass(frozen=True)
class FailureRecorded:
    job_type: str
    dead_lettered: bool


def record_failed_attempt(
    backend: Backend,
    connection: Connection,
    attempt: FailedAttempt,
    now: datetime,
    *,
    only_if: ColumnElement[bool] | None = None,
) -> FailureRecorded | None:
    """None if the claim no longer holds (or `only_if` is false): nothing is written."""
    claim = attempt.claim
    exhausted: ColumnElement[bool] = (
        true() if attempt.permanent else job_queue.c.attempts >= job_queue.c.max_attempts
    )
    row = connection.execute(
        update(job_queue)
        .where(fenced(claim), true() if only_if is None else only_if)
        .values(
            status=case((exhausted, "failed"), else_="pending"),
            finished_at=case((exhausted, literal(now, UTCDateTime)), else_=None),
            run_at=case(
                (exhausted, job_queue.c.run_at), else_=literal(attempt.retry_at, UTCDateTime)
            ),
            locked_by=case((exhausted, job_queue.c.locked_by), else_=None),
            failure_count=job_queue.c.failure_count + 1,
            last_error=attempt.message,
            progress=func.coalesce(literal(attempt.progress, Document), job_queue.c.progress),
            updated_at=now,
        )
        .returning(
            job_queue.c.status,
            job_queue.c.job_type,
            job_queue.c.payload,
            job_queue.c.attempts,
            job_queue.c.max_attempts,
        )
    ).one_or_none()
    if row is None:
        return None
    details: dict[str, Any] = {"traceback": attempt.traceback} if attempt.traceback else {}
    if attempt.permanent:
        details["permanent"] = True
    record_event(
        connection,
        claim.job_id,
        attempt.kind,
        now,
        attempt=claim.attempt,
        worker_id=claim.worker_id,
        message=attempt.message,
        details=details or None,
    )
    dead = row.status == "failed"
    increments = metrics.Increments()
    increments.add(
        metrics.FAILED if attempt.kind is EventKind.FAILED else metrics.RECLAIMED, row.job_type
    )
    if dead:
        increments.add(metrics.DEAD_LETTERED, row.job_type)
    increments.observe(metrics.PICKUPS, row.job_type, attempt.pickup_seconds)
    writer = claim.worker_id if attempt.kind is EventKind.FAILED else None
    backend.add_metrics(connection, increments, metrics.shard_for(writer))
    if dead:
        dead_letter(
            connection,
            job_id=claim.job_id,
            job_type=row.job_type,
            payload=row.payload,
            attempts=row.attempts,
            last_error=attempt.message,
            now=now,
            worker_id=claim.worker_id if attempt.kind is EventKind.FAILED else None,
            why=_why_dead(attempt, row.attempts, row.max_attempts),
        )
    else:
        record_retry_scheduled(connection, claim.job_id, claim.attempt, attempt.retry_at, now)
    return FailureRecorded(job_type=row.job_type, dead_lettered=dead)


def _why_dead(attempt: FailedAttempt, attempts: int, max_attempts: int) -> str:
    if attempt.permanent and attempts < max_attempts:
        return f"permanent error on attempt {attempts} of {max_attempts}, not retried"
    if attempt.permanent:
        return f"permanent error on the last attempt ({attempts} of {max_attempts})"
    return f"attempts exhausted ({attempts} of {max_attempts})"
