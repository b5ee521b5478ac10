"""Claiming jobs and keeping claims alive: claim, heartbeat, cancel requests, progress, reclaim."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, select, tuple_, update

from dominus.jobs.model import Claim, EventKind, Job, ReclaimedJob
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.failures import FailedAttempt, record_failed_attempt
from dominus.jobs.sql.predicates import IS_RUNNING, fenced
from dominus.jobs.sql.settling import release_claim
from dominus.jobs.sql.tables import job_queue, workers
from dominus.jobs.store import RetryDelay

UNSEEN_CLAIM_RELEASED = (
    "returned to pending by its worker, which was not running it (a claim whose commit the worker "
    "did not see, or a completion the database lost)"
)


def claim_jobs(
    backend: Backend,
    connection: Connection,
    worker_id: str,
    job_types: Sequence[str],
    limit: int,
    now: datetime,
) -> list[Job]:
    if limit <= 0 or not job_types:
        return []
    return backend.claim(connection, worker_id, job_types, limit, now)


def heartbeat(
    connection: Connection, worker_id: str, claims: Sequence[Claim], now: datetime
) -> list[tuple[Claim, bool]]:
    connection.execute(update(workers).where(workers.c.id == worker_id).values(last_seen_at=now))
    if not claims:
        return []
    rows = connection.execute(
        update(job_queue)
        .where(
            job_queue.c.locked_by == worker_id,
            IS_RUNNING,
            tuple_(job_queue.c.id, job_queue.c.attempts).in_(
                [(claim.job_id, claim.attempt) for claim in claims]
            ),
        )
        .values(heartbeat_at=now)
        .returning(job_queue.c.id, job_queue.c.attempts, job_queue.c.cancel_requested_at)
    )
    return [
        (Claim(row.id, worker_id, row.attempts), row.cancel_requested_at is not None)
        for row in rows
    ]


def release_unseen_claims(
    backend: Backend,
    connection: Connection,
    worker_id: str,
    known: Sequence[Claim],
    now: datetime,
) -> list[int]:
    """Return to pending the jobs claimed by `worker_id` that it does not know it holds: claimed
    in a transaction that committed on the server while the worker saw an error. Returns their
    ids."""
    rows = connection.execute(
        select(job_queue.c.id, job_queue.c.attempts).where(
            job_queue.c.locked_by == worker_id, IS_RUNNING
        )
    )
    held = set(known)
    unseen = [Claim(row.id, worker_id, row.attempts) for row in rows]
    return [
        claim.job_id
        for claim in unseen
        if claim not in held
        and release_claim(backend, connection, claim, now, UNSEEN_CLAIM_RELEASED)
    ]


def cancel_requests(connection: Connection, worker_id: str) -> list[Claim]:
    rows = connection.execute(
        select(job_queue.c.id, job_queue.c.attempts).where(
            job_queue.c.locked_by == worker_id,
            IS_RUNNING,
            job_queue.c.cancel_requested_at.is_not(None),
        )
    )
    return [Claim(row.id, worker_id, row.attempts) for row in rows]


def record_progress(
    connection: Connection, claim: Claim, progress: dict[str, Any], now: datetime
) -> bool:
    result = connection.execute(
        update(job_queue).where(fenced(claim)).values(progress=progress, updated_at=now)
    )
    return result.rowcount == 1


def reclaim_stale(
    backend: Backend,
    connection: Connection,
    now: datetime,
    max_age_seconds: float,
    retry_delay: RetryDelay,
) -> list[ReclaimedJob]:
    cutoff = now - timedelta(seconds=max_age_seconds)
    stale = connection.execute(
        select(
            job_queue.c.id,
            job_queue.c.locked_by,
            job_queue.c.attempts,
            job_queue.c.heartbeat_at,
            job_queue.c.job_type,
        )
        .where(IS_RUNNING, job_queue.c.heartbeat_at < cutoff)
        .order_by(job_queue.c.id)
        .limit(500)
    ).all()
    reclaimed = []
    for row in stale:
        claim = Claim(row.id, row.locked_by, row.attempts)
        retry_at = now + timedelta(seconds=retry_delay(row.job_type, row.attempts))
        outcome = _reclaim_one(
            backend,
            connection,
            claim,
            last_heartbeat=row.heartbeat_at,
            cutoff=cutoff,
            now=now,
            retry_at=retry_at,
        )
        if outcome is not None:
            reclaimed.append(outcome)
    if any(not job.dead_lettered for job in reclaimed):
        backend.notify_new_jobs(connection)
    return reclaimed


def _reclaim_one(
    backend: Backend,
    connection: Connection,
    claim: Claim,
    *,
    last_heartbeat: datetime | None,
    cutoff: datetime,
    now: datetime,
    retry_at: datetime,
) -> ReclaimedJob | None:
    message = (
        f"worker {claim.worker_id} stopped heartbeating during attempt {claim.attempt} "
        f"(last heartbeat {last_heartbeat.isoformat() if last_heartbeat else 'never'})"
    )
    attempt = FailedAttempt(claim, EventKind.RECLAIMED, message, retry_at)
    # Still stale: the worker may have heartbeated or finished since the candidates were read.
    recorded = record_failed_attempt(
        backend, connection, attempt, now, only_if=job_queue.c.heartbeat_at < cutoff
    )
    if recorded is None:
        return None
    return ReclaimedJob(
        job_id=claim.job_id,
        job_type=recorded.job_type,
        from_worker=claim.worker_id,
        attempt=claim.attempt,
        dead_lettered=recorded.dead_lettered,
        retry_at=retry_at,
    )
