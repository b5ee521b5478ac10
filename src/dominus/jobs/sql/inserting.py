"""Enqueue: plain inserts in batches, dedupe through the database's unique index."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select, text

from dominus.errors import QueueFullError
from dominus.jobs.model import ACTIVE_STATUSES, EnqueueResult, NewJob
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.tables import ENQUEUE_TIME_COLUMNS, NEW_JOB_COLUMNS, job_queue

ACTIVE_DEDUPE_PREDICATE = text("dedupe_key IS NOT NULL AND status IN ('pending', 'running')")
ACTIVE = [status.value for status in ACTIVE_STATUSES]
# A deduplicated insert can lose a race with a job finishing at the same moment; it then simply
# tries again. More than a few rounds would mean something is badly wrong.
DEDUPE_ROUNDS = 5


def insert_jobs(
    backend: Backend,
    connection: Connection,
    jobs: Sequence[NewJob],
    now: datetime,
    max_depth: int,
) -> list[EnqueueResult]:
    if max_depth > 0:
        _check_depth(connection, len(jobs), max_depth)
    results: list[EnqueueResult | None] = [None] * len(jobs)
    plain = [index for index, job in enumerate(jobs) if job.dedupe_key is None]
    if plain:
        ids = backend.insert_plain(connection, [jobs[index] for index in plain], now)
        for index, job_id in zip(plain, ids, strict=True):
            results[index] = EnqueueResult(job_id=job_id, created=True)
    for index, job in enumerate(jobs):
        if job.dedupe_key is not None:
            results[index] = _insert_deduplicated(backend, connection, job, now)
    backend.notify_new_jobs(connection, min(job.run_at for job in jobs))
    created = [
        job.job_type
        for job, result in zip(jobs, results, strict=True)
        if result is not None and result.created
    ]
    backend.count_enqueued(connection, created)
    return [result for result in results if result is not None]


def _check_depth(connection: Connection, adding: int, max_depth: int) -> None:
    active = connection.execute(
        select(func.count()).select_from(job_queue).where(job_queue.c.status.in_(ACTIVE))
    ).scalar_one()
    if active + adding > max_depth:
        raise QueueFullError(
            f"the job queue is full: {active} pending or running jobs, JOB_QUEUE_MAX_DEPTH is "
            f"{max_depth} (refused {adding} new job{'s' if adding != 1 else ''})"
        )


def _row(job: NewJob, now: datetime) -> dict[str, Any]:
    row: dict[str, Any] = {
        column.name: column.fixed
        if column.fixed is not None
        else now
        if column.name in ENQUEUE_TIME_COLUMNS
        else getattr(job, column.name)
        for column in NEW_JOB_COLUMNS
    }
    return row | {"dedupe_key": job.dedupe_key}


def _insert_deduplicated(
    backend: Backend, connection: Connection, job: NewJob, now: datetime
) -> EnqueueResult:
    statement = backend.insert_or_ignore(
        job_queue,
        _row(job, now),
        index_elements=["dedupe_key"],
        index_where=ACTIVE_DEDUPE_PREDICATE,
    ).returning(job_queue.c.id)
    existing_query = select(job_queue.c.id).where(
        job_queue.c.dedupe_key == job.dedupe_key, job_queue.c.status.in_(ACTIVE)
    )
    for _ in range(DEDUPE_ROUNDS):
        new_id = connection.execute(statement).scalar_one_or_none()
        if new_id is not None:
            return EnqueueResult(job_id=new_id, created=True)
        existing_id = connection.execute(existing_query).scalar_one_or_none()
        if existing_id is not None:
            return EnqueueResult(job_id=existing_id, created=False)
    raise RuntimeError(f"could not enqueue or find the job with dedupe key {job.dedupe_key!r}")
