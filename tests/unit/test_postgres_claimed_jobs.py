"""A job made from a PostgreSQL claim's row (payload as text, the rest as psycopg decodes it) is
the job the shared mapping (`job_from_fields`) makes of the same row, and comes in claim order."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from dominus.jobs.model import Job, JobStatus
from dominus.jobs.sql.postgres_backend import _as_read, _claimed_jobs, _utc
from dominus.jobs.sql.rows import JOB_FIELD_NAMES, job_from_fields
from tests.unit.test_job_from_fields import _every_field_set as every_field_set

T0 = datetime(2026, 12, 6, 8, 0, tzinfo=UTC)
NEW_YORK = timezone(timedelta(hours=-5))


def _row(job_id: int, priority: int = 0, **changes: Any) -> tuple[Any, ...]:
    """A claim's row as psycopg returns it: timestamps decoded in UTC, documents decoded, the
    payload as its JSON text."""
    values: dict[str, Any] = {
        "id": job_id,
        "job_type": "noop",
        "payload": '{"i": 1, "t": [2.5, null]}',
        "status": "running",
        "priority": priority,
        "attempts": 2,
        "max_attempts": 5,
        "failure_count": 1,
        "run_at": T0,
        "created_at": T0 - timedelta(seconds=1),
        "updated_at": T0 + timedelta(seconds=1),
        "started_at": T0 + timedelta(seconds=1),
        "finished_at": None,
        "heartbeat_at": T0 + timedelta(seconds=1),
        "cancel_requested_at": None,
        "locked_by": "worker-1",
        "result": None,
        "last_error": None,
        "progress": None,
        "dedupe_key": None,
        "timeout_seconds": None,
        "queue": "default",
        "concurrency_key": None,
        "concurrency_limit": None,
        "rate_key": None,
        **changes,
    }
    return tuple(values[name] for name in JOB_FIELD_NAMES)


def _row_of(job: Job) -> tuple[Any, ...]:
    """`job` as a claim's row: its payload as JSON text, its status as text."""
    values = {name: getattr(job, name) for name in JOB_FIELD_NAMES}
    values["payload"] = json.dumps(job.payload)
    values["status"] = job.status.value
    return tuple(values[name] for name in JOB_FIELD_NAMES)


EVERY_FIELD_SET = _row_of(every_field_set())


def _shared(row: tuple[Any, ...]) -> Job:
    return job_from_fields(row, _utc, _as_read)


@pytest.mark.parametrize(
    "row",
    [_row(8), EVERY_FIELD_SET, _row(9, status="pending")],
    ids=["fresh claim", "every field set", "another status"],
)
def test_a_claimed_job_is_the_job_the_shared_mapping_makes(row: tuple[Any, ...]) -> None:
    [job] = _claimed_jobs([row])
    expected = _shared(row)
    assert job.payload_text == expected.payload_text == row[2]  # not decoded yet
    assert type(job) is Job
    assert job == expected
    assert repr(job) == repr(expected)
    assert type(job.status) is JobStatus and job.status == row[3]
    assert dataclasses.asdict(job) == dataclasses.asdict(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.attempts = 3  # type: ignore[misc]
    assert dataclasses.replace(job, attempts=3) == dataclasses.replace(expected, attempts=3)


def test_times_read_in_another_zone_come_out_in_utc() -> None:
    local: dict[str, Any] = {
        name: T0.astimezone(NEW_YORK) for name in ("run_at", "created_at", "updated_at")
    }
    [job] = _claimed_jobs([_row(8, **local, started_at=None, heartbeat_at=None)])
    for moment in (job.run_at, job.created_at, job.updated_at):
        assert moment == T0 and moment.tzinfo is UTC


def test_claimed_jobs_come_in_claim_order() -> None:
    rows = [_row(3), _row(1, priority=1), _row(2, run_at=T0 - timedelta(seconds=1)), _row(0)]
    assert [job.id for job in _claimed_jobs(rows)] == [1, 2, 0, 3]
