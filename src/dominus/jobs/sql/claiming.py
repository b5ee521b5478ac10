"""Claiming jobs and keeping claims alive: claim, heartbeat, cancel requests, progress, reclaim."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Connection, Row, Select, select, tuple_, update

from dominus.jobs.liveness import LockOwner
from dominus.jobs.model import Claim, EventKind, Job, ReclaimedJob, WorkerInfo
from dominus.jobs.sql.admin import register_worker
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.failures import FailedAttempt, record_failed_attempt
from dominus.jobs.sql.predicates import IS_RUNNING, fenced
from dominus.jobs.sql.settling import release_claim
from dominus.jobs.sql.tables import job_queue, workers
from dominus.jobs.store import RetryDelay

log = logging.getLogger("dominus.worker")

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
    queues: Sequence[str] | None = None,
) -> list[Job]:
    if limit <= 0 or not job_types or (queues is not None and not queues):
        return []
    return backend.claim(connection, worker_id, job_types, limit, now, queues)


def heartbeat(
    connection: Connection,
    worker_id: str,
    claims: Sequence[Claim],
    now: datetime,
    register_as: WorkerInfo | None = None,
) -> list[tuple[Claim, bool]]:
    seen = connection.execute(
        update(workers).where(workers.c.id == worker_id).values(last_seen_at=now)
    )
    if seen.rowcount == 0 and register_as is not None:
        # The row went away under a live worker (a database restored or copied over it):
        # without it the worker would be invisible to `workers` and to a restore's check for
        # live workers.
        register_worker(connection, replace(register_as, last_seen_at=now, stopped_at=None))
        log.warning("worker %s had no row in workers any more; registered it again", worker_id)
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
    cutoff = _stale_cutoff(now, max_age_seconds)
    stale = connection.execute(
        _running_rows().where(job_queue.c.heartbeat_at < cutoff).order_by(job_queue.c.id).limit(500)
    ).all()

    def silence(row: Row[Any]) -> str:
        last = row.heartbeat_at.isoformat() if row.heartbeat_at else "never"
        return (
            f"worker {row.locked_by} stopped heartbeating during attempt {row.attempts} "
            f"(last heartbeat {last})"
        )

    # Still stale: the worker may have heartbeated or finished since the candidates were read.
    return _reclaim(
        backend, connection, stale, now, retry_delay, silence, job_queue.c.heartbeat_at < cutoff
    )


def any_stale(connection: Connection, now: datetime, max_age_seconds: float) -> bool:
    """Whether any running job's heartbeat is older than the max age. Nearly every reclaim pass
    finds none; asked first on a reading connection, such a pass takes no write lock (on SQLite
    it would hold up the worker's own claims, at start on a full queue most of all)."""
    cutoff = _stale_cutoff(now, max_age_seconds)
    stale = _running_rows().where(job_queue.c.heartbeat_at < cutoff).limit(1)
    return connection.execute(stale).first() is not None


def _stale_cutoff(now: datetime, max_age_seconds: float) -> datetime:
    return now - timedelta(seconds=max_age_seconds)


def lock_owners(connection: Connection, except_worker: str) -> list[LockOwner]:
    """The workers other than `except_worker` that hold running jobs and took a liveness lock."""
    owners = (
        select(job_queue.c.locked_by)
        .where(IS_RUNNING, job_queue.c.locked_by != except_worker)
        .distinct()
    )
    rows = connection.execute(
        select(workers.c.id, workers.c.liveness_lock, workers.c.hostname).where(
            workers.c.id.in_(owners), workers.c.liveness_lock.is_not(None)
        )
    )
    return [LockOwner(row.id, row.liveness_lock, row.hostname) for row in rows]


def reclaim_from_dead(
    backend: Backend,
    connection: Connection,
    worker_ids: Sequence[str],
    now: datetime,
    retry_delay: RetryDelay,
) -> list[ReclaimedJob]:
    """Reclaim the running jobs of workers whose liveness lock was found free."""
    rows = connection.execute(
        _running_rows().where(job_queue.c.locked_by.in_(list(worker_ids))).order_by(job_queue.c.id)
    ).all()

    def death(row: Row[Any]) -> str:
        return (
            f"worker {row.locked_by} died during attempt {row.attempts} "
            "(its liveness lock was free)"
        )

    return _reclaim(backend, connection, rows, now, retry_delay, death, None)


def _running_rows() -> Select[Any]:
    return select(
        job_queue.c.id,
        job_queue.c.locked_by,
        job_queue.c.attempts,
        job_queue.c.heartbeat_at,
        job_queue.c.job_type,
    ).where(IS_RUNNING)


def _reclaim(
    backend: Backend,
    connection: Connection,
    rows: Sequence[Row[Any]],
    now: datetime,
    retry_delay: RetryDelay,
    why: Callable[[Row[Any]], str],
    only_if: ColumnElement[bool] | None,
) -> list[ReclaimedJob]:
    reclaimed = []
    for row in rows:
        claim = Claim(row.id, row.locked_by, row.attempts)
        retry_at = now + timedelta(seconds=retry_delay(row.job_type, row.attempts))
        attempt = FailedAttempt(claim, EventKind.RECLAIMED, why(row), retry_at)
        recorded = record_failed_attempt(backend, connection, attempt, now, only_if=only_if)
        if recorded is None:
            continue
        reclaimed.append(
            ReclaimedJob(
                job_id=claim.job_id,
                job_type=recorded.job_type,
                from_worker=claim.worker_id,
                attempt=claim.attempt,
                dead_lettered=recorded.dead_lettered,
                retry_at=retry_at,
            )
        )
    retried = [job.retry_at for job in reclaimed if not job.dead_lettered]
    if retried:
        backend.notify_new_jobs(connection, min(retried))
    return reclaimed
