"""Turning result rows into model objects."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row

from dominus.jobs.model import (
    AttemptError,
    DeadLetterEntry,
    EventKind,
    Job,
    JobEvent,
    JobStatus,
    WorkerInfo,
)
from dominus.jobs.sql.tables import dead_letter_jobs, job_events, job_queue

JOB_COLUMNS = tuple(job_queue.c)
# The job row's columns in table order: every statement that returns a whole job row lists them
# in this order, so one mapping (`job_from_fields`) reads them all.
JOB_FIELD_NAMES = tuple(column.name for column in JOB_COLUMNS)
JOB_FIELDS = ", ".join(JOB_FIELD_NAMES)
# A job without the two documents its handler's caller and the handler decide the size of.
SUMMARY_COLUMNS = tuple(
    column for column in job_queue.c if column.name not in {"payload", "result"}
)
EVENT_COLUMNS = tuple(job_events.c)
DEAD_LETTER_COLUMNS = tuple(dead_letter_jobs.c)

# Turns one stored value into the model's (a backend's timestamps or JSON documents as its
# driver returns them); `_as_is` where SQLAlchemy's types have done that already. Never given
# None: a NULL column is None in the model whatever the backend.
Decode = Callable[[Any], Any]


def _as_is(value: Any) -> Any:
    return value


# Each status by its stored text: a dictionary lookup costs a fraction of the enum's own call,
# which runs for every job claimed. Text that names no status is left to the enum (its error).
_STATUSES = {status.value: status for status in JobStatus}


def _status(text: str) -> JobStatus:
    return _STATUSES.get(text) or JobStatus(text)


def job_from_fields(fields: Sequence[Any], time: Decode, document: Decode) -> Job:
    """The job of a row whose values come in `JOB_FIELD_NAMES` order: the one row-to-`Job`
    mapping, whichever backend and driver read the row."""
    # The nullable columns: a claimed job has no finish, cancel request, result or progress, so
    # None is kept without a call to the decoder (this runs for every job claimed).
    started_at, finished_at, heartbeat_at, cancel_requested_at = fields[11:15]
    result, progress = fields[16], fields[18]
    return Job(
        id=fields[0],
        job_type=fields[1],
        payload=document(fields[2]),
        status=_status(fields[3]),
        priority=fields[4],
        attempts=fields[5],
        max_attempts=fields[6],
        failure_count=fields[7],
        run_at=time(fields[8]),
        created_at=time(fields[9]),
        updated_at=time(fields[10]),
        started_at=None if started_at is None else time(started_at),
        finished_at=None if finished_at is None else time(finished_at),
        heartbeat_at=None if heartbeat_at is None else time(heartbeat_at),
        cancel_requested_at=None if cancel_requested_at is None else time(cancel_requested_at),
        locked_by=fields[15],
        result=None if result is None else document(result),
        last_error=fields[17],
        progress=None if progress is None else document(progress),
        dedupe_key=fields[19],
        timeout_seconds=fields[20],
        queue=fields[21],
        concurrency_key=fields[22],
        concurrency_limit=fields[23],
        rate_key=fields[24],
    )


def job_from_row(row: Row[Any]) -> Job:
    """A job read through SQLAlchemy Core (its types already decoded the values). A summary
    row (SUMMARY_COLUMNS) has no payload and no result: the job carries `{}` and None."""
    values = row._mapping
    fields = [values.get(name, {} if name == "payload" else None) for name in JOB_FIELD_NAMES]
    return job_from_fields(fields, _as_is, _as_is)


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
        liveness_lock=values["liveness_lock"],
    )
