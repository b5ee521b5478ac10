"""Operations people run by hand: cancel, retry, the dead-letter queue, listings and stats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, case, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from dominus.errors import InvalidTransitionError, JobNotFoundError
from dominus.jobs.model import (
    DeadLetterEntry,
    EventKind,
    Job,
    JobEvent,
    JobStatus,
    QueueStats,
    WorkerInfo,
)
from dominus.jobs.selection import JobSelection
from dominus.jobs.sql import metrics
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.filters import conditions
from dominus.jobs.sql.history import record_event
from dominus.jobs.sql.predicates import IS_PENDING
from dominus.jobs.sql.queues import queue_states
from dominus.jobs.sql.rows import (
    DEAD_LETTER_COLUMNS,
    EVENT_COLUMNS,
    JOB_COLUMNS,
    SUMMARY_COLUMNS,
    dead_letter_from_row,
    event_from_row,
    job_from_row,
    worker_from_row,
)
from dominus.jobs.sql.tables import MAX_ID, dead_letter_jobs, job_events, job_queue, workers


def get_job(connection: Connection, job_id: int, *, for_update: bool = False) -> Job:
    if not 0 < job_id <= MAX_ID:
        raise JobNotFoundError(f"no job with id {job_id}")
    query = select(*JOB_COLUMNS).where(job_queue.c.id == job_id)
    if for_update:
        query = query.with_for_update()
    row = connection.execute(query).first()
    if row is None:
        raise JobNotFoundError(f"no job with id {job_id}")
    return job_from_row(row)


def list_jobs(
    connection: Connection,
    selection: JobSelection,
    now: datetime | None,
    limit: int,
    *,
    before_id: int | None = None,
    with_payload_and_result: bool = True,
) -> list[Job]:
    """Newest first; `before_id` pages towards older jobs."""
    columns = JOB_COLUMNS if with_payload_and_result else SUMMARY_COLUMNS
    query = select(*columns).where(*conditions(selection, now))
    if before_id is not None:
        query = query.where(job_queue.c.id < min(before_id, MAX_ID))
    query = query.order_by(job_queue.c.id.desc()).limit(limit)
    return [job_from_row(row) for row in connection.execute(query)]


def job_events_of(connection: Connection, job_id: int) -> list[JobEvent]:
    get_job(connection, job_id)
    rows = connection.execute(
        select(*EVENT_COLUMNS).where(job_events.c.job_id == job_id).order_by(job_events.c.id)
    )
    return [event_from_row(row) for row in rows]


def request_cancel(backend: Backend, connection: Connection, job_id: int, now: datetime) -> Job:
    job = get_job(connection, job_id, for_update=True)
    if job.status is JobStatus.PENDING:
        connection.execute(
            update(job_queue)
            .where(job_queue.c.id == job_id)
            .values(status="cancelled", finished_at=now, updated_at=now, cancel_requested_at=now)
        )
        record_event(
            connection, job_id, EventKind.CANCELLED, now, message="cancelled before it ran"
        )
        increments = metrics.Increments()
        increments.add(metrics.CANCELLED, job.job_type)
        backend.add_metrics(connection, increments, metrics.shard_for())
    elif job.status is JobStatus.RUNNING:
        if job.cancel_requested_at is None:
            backend.notify_cancel(connection, job.locked_by or "")
            connection.execute(
                update(job_queue)
                .where(job_queue.c.id == job_id)
                .values(cancel_requested_at=now, updated_at=now)
            )
            record_event(
                connection,
                job_id,
                EventKind.CANCEL_REQUESTED,
                now,
                attempt=job.attempts,
                worker_id=job.locked_by,
                message=f"cancel requested; worker {job.locked_by} will abort attempt "
                f"{job.attempts}",
            )
    else:
        raise InvalidTransitionError(f"job {job_id} is already {job.status.value}")
    return get_job(connection, job_id)


def restarted(now: datetime) -> dict[str, Any]:
    """The columns of a job sent back to pending by a retry or a requeue."""
    return {
        "status": "pending",
        "attempts": 0,
        "run_at": now,
        "updated_at": now,
        "started_at": None,
        "finished_at": None,
        "heartbeat_at": None,
        "cancel_requested_at": None,
        "locked_by": None,
        "result": None,
    }


def restart_job(
    backend: Backend, connection: Connection, job: Job, now: datetime, kind: EventKind
) -> Job:
    """failed | cancelled → pending, same id, attempts reset; closes open DLQ entries."""
    if job.status not in (JobStatus.FAILED, JobStatus.CANCELLED):
        raise InvalidTransitionError(
            f"job {job.id} is {job.status.value}; only failed or cancelled jobs can be retried"
        )
    try:
        with connection.begin_nested():
            connection.execute(
                update(job_queue).where(job_queue.c.id == job.id).values(**restarted(now))
            )
    except IntegrityError as error:
        raise InvalidTransitionError(
            f"job {job.id} cannot go back to pending: another active job holds its dedupe key "
            f"{job.dedupe_key!r}"
        ) from error
    connection.execute(
        update(dead_letter_jobs)
        .where(dead_letter_jobs.c.job_id == job.id, dead_letter_jobs.c.requeued_at.is_(None))
        .values(requeued_at=now)
    )
    backend.notify_new_jobs(connection, now)
    word = "requeued from the dead-letter queue" if kind is EventKind.REQUEUED else "retried"
    record_event(connection, job.id, kind, now, message=f"{word}; attempts reset")
    return get_job(connection, job.id)


@dataclass(frozen=True)
class DeadLetterFilter:
    """Which entries a listing shows: requeued ones too, of one job type, failed in a span."""

    include_requeued: bool = False
    job_type: str | None = None
    failed_after: datetime | None = None
    failed_before: datetime | None = None


def list_dead_letters(
    connection: Connection, listed: DeadLetterFilter, limit: int
) -> list[DeadLetterEntry]:
    query = select(*DEAD_LETTER_COLUMNS).order_by(dead_letter_jobs.c.id.desc()).limit(limit)
    if not listed.include_requeued:
        query = query.where(dead_letter_jobs.c.requeued_at.is_(None))
    if listed.job_type is not None:
        query = query.where(dead_letter_jobs.c.job_type == listed.job_type)
    if listed.failed_after is not None:
        query = query.where(dead_letter_jobs.c.failed_at > listed.failed_after)
    if listed.failed_before is not None:
        query = query.where(dead_letter_jobs.c.failed_at < listed.failed_before)
    return [dead_letter_from_row(row) for row in connection.execute(query)]


def dead_letter_of_job(connection: Connection, job_id: int) -> DeadLetterEntry | None:
    """The job's latest dead-letter entry (a job requeued and failed again has several)."""
    row = connection.execute(
        select(*DEAD_LETTER_COLUMNS)
        .where(dead_letter_jobs.c.job_id == job_id)
        .order_by(dead_letter_jobs.c.id.desc())
        .limit(1)
    ).first()
    return None if row is None else dead_letter_from_row(row)


def delete_dead_letters(connection: Connection, entry_ids: Sequence[int]) -> int:
    """Delete these entries (their jobs stay, failed); ids that name no entry are ignored."""
    wanted = sorted({entry_id for entry_id in entry_ids if 0 < entry_id <= MAX_ID})
    if not wanted:
        return 0
    statement = delete(dead_letter_jobs).where(dead_letter_jobs.c.id.in_(wanted))
    return int(connection.execute(statement).rowcount)


def get_dead_letter(connection: Connection, entry_id: int) -> DeadLetterEntry:
    if not 0 < entry_id <= MAX_ID:
        raise JobNotFoundError(f"no dead-letter entry with id {entry_id}")
    row = connection.execute(
        select(*DEAD_LETTER_COLUMNS).where(dead_letter_jobs.c.id == entry_id)
    ).first()
    if row is None:
        raise JobNotFoundError(f"no dead-letter entry with id {entry_id}")
    return dead_letter_from_row(row)


def requeue_dead_letter(
    backend: Backend, connection: Connection, entry_id: int, now: datetime
) -> Job:
    entry = get_dead_letter(connection, entry_id)
    if entry.requeued_at is not None:
        raise InvalidTransitionError(
            f"dead-letter entry {entry_id} was already requeued at {entry.requeued_at.isoformat()}"
        )
    job = get_job(connection, entry.job_id, for_update=True)
    return restart_job(backend, connection, job, now, EventKind.REQUEUED)


def purge_dead_letters(connection: Connection, older_than: datetime | None) -> int:
    statement = delete(dead_letter_jobs)
    if older_than is not None:
        statement = statement.where(dead_letter_jobs.c.failed_at < older_than)
    return connection.execute(statement).rowcount


def register_worker(connection: Connection, worker: WorkerInfo) -> None:
    connection.execute(
        insert(workers).values(
            id=worker.id,
            hostname=worker.hostname,
            pid=worker.pid,
            concurrency=worker.concurrency,
            job_types=worker.job_types,
            started_at=worker.started_at,
            last_seen_at=worker.last_seen_at,
            liveness_lock=worker.liveness_lock,
        )
    )


def mark_worker_stopped(connection: Connection, worker_id: str, now: datetime) -> None:
    connection.execute(
        update(workers).where(workers.c.id == worker_id).values(stopped_at=now, last_seen_at=now)
    )


def list_workers(connection: Connection, alive_since: datetime | None) -> list[WorkerInfo]:
    query = select(workers).order_by(workers.c.started_at.desc())
    if alive_since is not None:
        query = query.where(workers.c.last_seen_at >= alive_since, workers.c.stopped_at.is_(None))
    return [worker_from_row(row) for row in connection.execute(query)]


def queue_stats(connection: Connection, now: datetime, alive_since: datetime) -> QueueStats:
    by_status = {status.value: 0 for status in JobStatus}
    by_type: dict[str, dict[str, int]] = {}
    counts = connection.execute(
        select(job_queue.c.status, job_queue.c.job_type, func.count()).group_by(
            job_queue.c.status, job_queue.c.job_type
        )
    )
    for status, job_type, count in counts:
        by_status[status] += count
        by_type.setdefault(job_type, {})[status] = count
    dead = connection.execute(
        select(func.count())
        .select_from(dead_letter_jobs)
        .where(dead_letter_jobs.c.requeued_at.is_(None))
    ).scalar_one()
    oldest: datetime | None = connection.execute(
        select(func.min(job_queue.c.created_at)).where(IS_PENDING)
    ).scalar_one()
    due_since: datetime | None = connection.execute(
        select(func.min(_became_due)).where(IS_PENDING, job_queue.c.run_at <= now)
    ).scalar_one()
    alive = connection.execute(
        select(func.count())
        .select_from(workers)
        .where(workers.c.last_seen_at >= alive_since, workers.c.stopped_at.is_(None))
    ).scalar_one()
    return QueueStats(
        by_status=by_status,
        by_type=by_type,
        dead_letter=dead,
        oldest_pending_age_seconds=_age_seconds(oldest, now),
        workers_alive=alive,
        latency_seconds=_age_seconds(due_since, now),
        queues=queue_states(connection),
    )


# When a pending job became due: its run_at, or its creation when it was enqueued with a run_at
# in the past (it cannot have waited before it existed). A job scheduled ahead or waiting out a
# retry backoff is not due yet, so it adds no latency (Sidekiq's queue latency).
_became_due = case(
    (job_queue.c.run_at > job_queue.c.created_at, job_queue.c.run_at),
    else_=job_queue.c.created_at,
)


def _age_seconds(oldest: datetime | None, now: datetime) -> float | None:
    return None if oldest is None else max(0.0, (now - oldest).total_seconds())
