"""Turning result rows into model objects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row

from dominus.db.schema import dead_letter_jobs, job_events, job_queue
from dominus.jobs.model import (
    AttemptError,
    DeadLetterEntry,
    EventKind,
    Job,
    JobEvent,
    JobStatus,
    WorkerInfo,
)

JOB_COLUMNS = tuple(job_queue.c)
# A job without the two documents its handler's caller and the handler decide the size of.
SUMMARY_COLUMNS = tuple(
    column for column in job_queue.c if column.name not in {"payload", "result"}
)
EVENT_COLUMNS = tuple(job_events.c)
DEAD_LETTER_COLUMNS = tuple(dead_letter_jobs.c)


def job_from_row(row: Row[Any]) -> Job:
    values = row._mapping
    return Job(
        id=values["id"],
        job_type=values["job_type"],
        payload=values.get("payload", {}),  # not read for summaries (SUMMARY_COLUMNS)
        status=JobStatus(values["status"]),
        priority=values["priority"],
        attempts=values["attempts"],
        max_attempts=values["max_attempts"],
        failure_count=values["failure_count"],
        run_at=values["run_at"],
        created_at=values["created_at"],
        updated_at=values["updated_at"],
        started_at=values["started_at"],
        finished_at=values["finished_at"],
        heartbeat_at=values["heartbeat_at"],
        cancel_requested_at=values["cancel_requested_at"],
        locked_by=values["locked_by"],
        result=values.get("result"),
        last_error=values["last_error"],
        progress=values["progress"],
        dedupe_key=values["dedupe_key"],
        timeout_seconds=values["timeout_seconds"],
    )


def event_from_row(row: Row[Any]) -> JobEvent:
    values = row._mapping
    return JobEvent(
        id=values["id"],
        job_id=values["job_id"],
        kind=EventKind(values["kind"]),
        at=values["at"],
        attempt=values["attempt"],
        worker_id=values["worker_id"],
        message=values["message"],
        details=values["details"],
    )


def dead_letter_from_row(row: Row[Any]) -> DeadLetterEntry:
    values = row._mapping
    return DeadLetterEntry(
        id=values["id"],
        job_id=values["job_id"],
        job_type=values["job_type"],
        payload=values.get("payload", {}),  # not read for summaries (SUMMARY_COLUMNS)
        attempts=values["attempts"],
        errors=[attempt_error_from_json(item) for item in values["errors"]],
        last_error=values["last_error"],
        failed_at=values["failed_at"],
        requeued_at=values["requeued_at"],
    )


def attempt_error_from_json(item: dict[str, Any]) -> AttemptError:
    return AttemptError(
        attempt=item.get("attempt"),
        message=item.get("message", ""),
        traceback=item.get("traceback"),
        at=datetime.fromisoformat(item["at"]),
    )


def worker_from_row(row: Row[Any]) -> WorkerInfo:
    values = row._mapping
    return WorkerInfo(
        id=values["id"],
        hostname=values["hostname"],
        pid=values["pid"],
        concurrency=values["concurrency"],
        job_types=list(values["job_types"]),
        started_at=values["started_at"],
        last_seen_at=values["last_seen_at"],
        stopped_at=values["stopped_at"],
    )
