"""Job events and dead-letter entries: the parts of a job's story that are not its row."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, insert, select

from dominus.jobs.model import ATTEMPT_ERROR_EVENTS, ROUND_START_EVENTS, EventKind
from dominus.jobs.sql.tables import dead_letter_jobs, job_events

_insert_event = insert(job_events)


def record_event(
    connection: Connection,
    job_id: int,
    kind: EventKind,
    at: datetime,
    *,
    attempt: int | None = None,
    worker_id: str | None = None,
    message: str | None = None,
    details: dict[str, Any] | None = None,
) -> None:
    connection.execute(
        _insert_event,
        {
            "job_id": job_id,
            "kind": kind.value,
            "at": at,
            "attempt": attempt,
            "worker_id": worker_id,
            "message": message,
            "details": details,
        },
    )


def record_retry_scheduled(
    connection: Connection, job_id: int, failed_attempt: int, retry_at: datetime, now: datetime
) -> None:
    record_event(
        connection,
        job_id,
        EventKind.RETRY_SCHEDULED,
        now,
        attempt=failed_attempt,
        message=f"attempt {failed_attempt + 1} not before {retry_at.isoformat()}",
        details={"run_at": retry_at.isoformat()},
    )


def current_round_errors(connection: Connection, job_id: int) -> list[dict[str, Any]]:
    """Every attempt error since the job last started a round (enqueue, requeue or retry)."""
    round_start = (
        select(func.coalesce(func.max(job_events.c.id), 0))
        .where(job_events.c.job_id == job_id)
        .where(job_events.c.kind.in_([kind.value for kind in ROUND_START_EVENTS]))
        .scalar_subquery()
    )
    rows = connection.execute(
        select(job_events.c.attempt, job_events.c.message, job_events.c.details, job_events.c.at)
        .where(job_events.c.job_id == job_id)
        .where(job_events.c.kind.in_([kind.value for kind in ATTEMPT_ERROR_EVENTS]))
        .where(job_events.c.id > round_start)
        .order_by(job_events.c.id)
    )
    return [
        {
            "attempt": row.attempt,
            "message": row.message or "",
            "traceback": (row.details or {}).get("traceback"),
            "at": row.at.isoformat(),
        }
        for row in rows
    ]


def dead_letter(
    connection: Connection,
    *,
    job_id: int,
    job_type: str,
    payload: dict[str, Any],
    attempts: int,
    last_error: str | None,
    now: datetime,
    worker_id: str | None,
    why: str,
) -> None:
    """Write the DLQ entry for a job whose last attempt just failed (or failed permanently), and
    say so in its events, `why` first. Call after the attempt's own FAILED/RECLAIMED event, so
    its error is included."""
    errors = current_round_errors(connection, job_id)
    connection.execute(
        insert(dead_letter_jobs).values(
            job_id=job_id,
            job_type=job_type,
            payload=payload,
            attempts=attempts,
            errors=errors,
            last_error=last_error,
            failed_at=now,
        )
    )
    record_event(
        connection,
        job_id,
        EventKind.DEAD_LETTERED,
        now,
        attempt=attempts,
        worker_id=worker_id,
        message=f"{why}; moved to the dead-letter queue",
    )
