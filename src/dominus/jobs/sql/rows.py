"""Turning result rows into model objects."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row

from dominus.jobs.model import (
    PAYLOAD_TEXT,
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

if tuple(field.name for field in dataclasses.fields(Job)) != JOB_FIELD_NAMES:
    # `job_from_fields` names a job's fields by its columns.
    raise RuntimeError("the job_queue columns and the Job fields differ in names or order")

# Turns one stored value into the model's (a backend's timestamps or JSON documents as its
# driver returns them); `_as_is` where SQLAlchemy's types have done that already. Never given
# None: a NULL column is None in the model whatever the backend.
Decode = Callable[[Any], Any]


def _as_is(value: Any) -> Any:
    return value


# Each status by its stored text: a dictionary lookup costs a fraction of the enum's own call,
# which runs for every job claimed. Text that names no status is left to the enum (its error).
_STATUSES = {status.value: status for status in JobStatus}


def job_status(text: str) -> JobStatus:
    return _STATUSES.get(text) or JobStatus(text)


def job_from_fields(fields: Sequence[Any], time: Decode, document: Decode) -> Job:
    """The job of a row whose values come in `JOB_FIELD_NAMES` order: the one row-to-`Job`
    mapping, whichever backend and driver read the row. A payload given as text (a claim reads
    it so) is the payload's JSON text: the job decodes it when `payload` is first read."""
    values = dict(zip(JOB_FIELD_NAMES, fields, strict=True))
    payload = fields[2]
    if type(payload) is str:
        values[PAYLOAD_TEXT] = values.pop("payload")
    else:
        values["payload"] = document(payload)
    values["status"] = job_status(fields[3])
    values["run_at"] = time(fields[8])
    values["created_at"] = time(fields[9])
    values["updated_at"] = time(fields[10])
    # The nullable columns: a claimed job has no finish, cancel request, result or progress, so
    # None is kept without a call to the decoder (this runs for every job claimed).
    started_at, finished_at, heartbeat_at, cancel_requested_at = fields[11:15]
    if started_at is not None:
        values["started_at"] = time(started_at)
    if finished_at is not None:
        values["finished_at"] = time(finished_at)
    if heartbeat_at is not None:
        values["heartbeat_at"] = time(heartbeat_at)
    if cancel_requested_at is not None:
        values["cancel_requested_at"] = time(cancel_requested_at)
    if fields[16] is not None:
        values["result"] = document(fields[16])
    if fields[18] is not None:
        values["progress"] = document(fields[18])
    return Job.from_fields(values)


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
