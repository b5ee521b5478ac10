"""The SQLite hot path, on the sqlite3 driver connection.

Profiles of the drain and of batch enqueue showed SQLAlchemy's per-statement machinery (bind
and result processors, insertmanyvalues falling back to one INSERT per row when it must return
ids in order) costing more than SQLite itself. These three statements (insert a batch, claim,
complete a batch) therefore run on the raw `sqlite3` connection of the transaction SQLAlchemy
opened; everything else, and PostgreSQL entirely, stays on SQLAlchemy Core.

Values are stored exactly as SQLAlchemy would store them (see `dominus.db.types.UTCDateTime`:
naive UTC text `YYYY-MM-DD HH:MM:SS.ffffff`; JSON as text), so both paths read each other's rows.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Engine

from dominus.db.errors import database_errors, is_busy_error, translated
from dominus.jobs.model import Completed, Job, JobStatus, NewJob
from dominus.jobs.sql import metrics

JOB_FIELDS = (
    "id, job_type, payload, status, priority, attempts, max_attempts, failure_count, run_at, "
    "created_at, updated_at, started_at, finished_at, heartbeat_at, cancel_requested_at, "
    "locked_by, result, last_error, progress, dedupe_key, timeout_seconds"
)

_INSERT = (
    "INSERT INTO job_queue (job_type, payload, status, priority, attempts, max_attempts, "
    "failure_count, run_at, created_at, updated_at, timeout_seconds) "
    "VALUES (?, ?, 'pending', ?, 0, ?, 0, ?, ?, ?, ?)"
)

_COMPLETE = (
    "UPDATE job_queue SET status = 'completed', result = ?, "
    "progress = COALESCE(?, progress), finished_at = ?, updated_at = ? "
    "WHERE id = ? AND locked_by = ? AND attempts = ? AND status = 'running'"
)


def driver_connection(connection: Connection) -> sqlite3.Connection:
    raw = connection.connection.driver_connection
    assert isinstance(raw, sqlite3.Connection)
    return raw


def stored_time(value: datetime) -> str:
    """A UTC timestamp as SQLAlchemy stores it in SQLite."""
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def _time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).replace(tzinfo=UTC)


def _document(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _encoded(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def insert_plain_jobs(raw: sqlite3.Connection, jobs: Sequence[NewJob], now: datetime) -> list[int]:
    """Insert jobs without dedupe keys; returns their ids in order.

    The ids come from `last_insert_rowid()`: the table has no AUTOINCREMENT, so SQLite gives each
    new row max(rowid) + 1, and the write lock held by this transaction keeps any other writer
    out in between, which makes the ids of one executemany consecutive. The count is checked."""
    created = stored_time(now)
    rows = [
        (
            job.job_type,
            json.dumps(job.payload),
            job.priority,
            job.max_attempts,
            stored_time(job.run_at) if job.run_at != now else created,
            created,
            created,
            job.timeout_seconds,
        )
        for job in jobs
    ]
    if len(rows) == 1:
        (job_id,) = raw.execute(_INSERT + " RETURNING id", rows[0]).fetchone()
        return [job_id]
    raw.executemany(_INSERT, rows)
    last_id = raw.execute("SELECT last_insert_rowid()").fetchone()[0]
    first_id = last_id - len(rows) + 1
    (count,) = raw.execute(
        "SELECT count(*) FROM job_queue WHERE id BETWEEN ? AND ?", (first_id, last_id)
    ).fetchone()
    if count != len(rows):  # pragma: no cover - only if SQLite changed its rowid rule
        raise RuntimeError("inserted job ids are not consecutive; cannot map them to the batch")
    return list(range(first_id, last_id + 1))


@lru_cache(maxsize=64)
def _claim_sql(type_count: int) -> str:
    # The literal 'pending' lets the planner match the partial claim index, and INDEXED BY holds
    # it there: walking the claim index in order stops after LIMIT rows, however many jobs wait
    # or have finished, where any other plan would sort every pending row on every claim.
    placeholders = ", ".join("?" * type_count)
    return (
        "UPDATE job_queue SET status = 'running', locked_by = ?, attempts = attempts + 1, "
        "started_at = ?, heartbeat_at = ?, updated_at = ? "
        "WHERE id IN (SELECT id FROM job_queue INDEXED BY ix_job_queue_claim "
        f"WHERE status = 'pending' AND run_at <= ? AND job_type IN ({placeholders}) "
        "ORDER BY priority DESC, run_at, id LIMIT ?) "
        f"RETURNING {JOB_FIELDS}"
    )


def claim_jobs(
    raw: sqlite3.Connection, worker_id: str, job_types: Sequence[str], limit: int, now: datetime
) -> list[Job]:
    stamp = stored_time(now)
    rows = raw.execute(
        _claim_sql(len(job_types)), (worker_id, stamp, stamp, stamp, stamp, *job_types, limit)
    ).fetchall()
    jobs = [_claimed_job(row, now, stamp) for row in rows]
    jobs.sort(key=lambda job: (-job.priority, job.run_at, job.id))
    return jobs


def _claimed_job(row: tuple[Any, ...], now: datetime, stamp: str) -> Job:
    """A row this claim just wrote: its status and claim timestamps are known without parsing
    (this runs for every claimed job)."""
    return Job(
        id=row[0],
        job_type=row[1],
        payload=json.loads(row[2]),
        status=JobStatus.RUNNING,
        priority=row[4],
        attempts=row[5],
        max_attempts=row[6],
        failure_count=row[7],
        run_at=now if row[8] == stamp else datetime.fromisoformat(row[8]).replace(tzinfo=UTC),
        created_at=now if row[9] == stamp else datetime.fromisoformat(row[9]).replace(tzinfo=UTC),
        updated_at=now,
        started_at=now,
        finished_at=_time(row[12]),
        heartbeat_at=now,
        cancel_requested_at=_time(row[14]),
        locked_by=row[15],
        result=_document(row[16]),
        last_error=row[17],
        progress=_document(row[18]),
        dedupe_key=row[19],
        timeout_seconds=row[20],
    )


def complete_jobs(raw: sqlite3.Connection, outcomes: Sequence[Completed], now: datetime) -> int:
    """Mark completed attempts, fenced on their claims. Returns how many rows changed."""
    stamp = stored_time(now)
    cursor = raw.executemany(
        _COMPLETE,
        [
            (
                _encoded(outcome.result),
                _encoded(outcome.progress),
                stamp,
                stamp,
                outcome.claim.job_id,
                outcome.claim.worker_id,
                outcome.claim.attempt,
            )
            for outcome in outcomes
        ],
    )
    return cursor.rowcount


class LoopConnections:
    """The worker loop's own connection, held for the thread's life, for its hottest
    transaction: record a batch of completed attempts and claim the freed slots. Checking a
    connection out of the pool and through SQLAlchemy's transaction events for every tick cost
    more than the transaction's SQL (ADR 0003). Each thread gets its own connection, so it is
    never shared; anything that is not the common case goes back to the general path."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._local = threading.local()

    def settle_completed(
        self,
        outcomes: Sequence[Completed],
        now: datetime,
        claim_for: tuple[str, Sequence[str], int] | None,
    ) -> list[Job] | None:
        """Complete every outcome and claim, in one transaction. None (nothing written) when a
        completion's claim turned out to be lost: the caller then takes the general path, which
        records that."""
        with database_errors():
            raw = self._connection()
        try:
            raw.execute("BEGIN IMMEDIATE")
            try:
                if outcomes and complete_jobs(raw, outcomes, now) != len(outcomes):
                    raw.rollback()
                    return None
                if outcomes:
                    metrics.write_sqlite(
                        raw,
                        metrics.Increments().completions(outcomes),
                        metrics.shard_for(outcomes[0].claim.worker_id),
                    )
                claimed = claim_jobs(raw, *claim_for, now) if claim_for else []
                raw.commit()
            except BaseException:
                raw.rollback()
                raise
        except sqlite3.Error as error:
            self._forget_if_broken(error)
            raise translated(error) from error
        return claimed

    def _connection(self) -> sqlite3.Connection:
        pooled = getattr(self._local, "pooled", None)
        if pooled is None:
            pooled = self._engine.raw_connection()
            self._local.pooled = pooled
        raw = pooled.driver_connection
        assert isinstance(raw, sqlite3.Connection)
        return raw

    def _forget_if_broken(self, error: sqlite3.Error) -> None:
        if is_busy_error(error):
            return
        pooled = getattr(self._local, "pooled", None)
        self._local.pooled = None
        if pooled is not None:
            pooled.invalidate()
