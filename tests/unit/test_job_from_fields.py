"""A job made from a row's fields is the job its `__init__` would make: equal, with the same
repr, frozen, and `dataclasses.replace` works on it."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dominus.jobs.model import Job, JobStatus
from dominus.jobs.sql.rows import JOB_FIELD_NAMES, job_from_fields
from tests.support.jobs import running_job

T0 = datetime(2026, 12, 6, 8, 0, tzinfo=UTC)


def _stored(value: Any) -> Any:
    """A value as a driver that stores text would return it."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _document(text: str) -> Any:
    return json.loads(text)


def _every_field_set() -> Job:
    return Job(
        id=7,
        job_type="noop",
        payload={"i": 1, "t": 2.5},
        status=JobStatus.FAILED,
        priority=3,
        attempts=2,
        max_attempts=5,
        failure_count=1,
        run_at=T0,
        created_at=T0 - timedelta(seconds=1),
        updated_at=T0 + timedelta(seconds=1),
        started_at=T0 + timedelta(seconds=2),
        finished_at=T0 + timedelta(seconds=3),
        heartbeat_at=T0 + timedelta(seconds=4),
        cancel_requested_at=T0 + timedelta(seconds=5),
        locked_by="worker-1",
        result={"done": True},
        last_error="boom",
        progress={"step": 2},
        dedupe_key="key",
        timeout_seconds=30.0,
        queue="mail",
        concurrency_key="account-1",
        concurrency_limit=2,
        rate_key="smtp",
    )


def _claimed() -> Job:
    return running_job(8, "noop", at=T0, started_at=T0, heartbeat_at=T0)


def _read_back(job: Job) -> Job:
    row = [_stored(getattr(job, name)) for name in JOB_FIELD_NAMES]
    return job_from_fields(row, _time, _document)


@pytest.mark.parametrize("made", [_every_field_set(), _claimed()], ids=["every field", "claimed"])
def test_a_job_read_from_its_fields_is_the_job_init_makes(made: Job) -> None:
    read = _read_back(made)
    assert type(read) is Job
    assert read == made
    assert repr(read) == repr(made)
    assert dataclasses.asdict(read) == dataclasses.asdict(made)


def test_a_job_read_from_its_fields_is_frozen_and_replaceable() -> None:
    read = _read_back(_claimed())
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.attempts = 2  # type: ignore[misc]
    again = dataclasses.replace(read, attempts=2, payload={"n": 1})
    assert again == dataclasses.replace(_claimed(), attempts=2, payload={"n": 1})
    assert read.attempts == 1


def test_jobs_with_hashable_fields_hash_alike_however_made() -> None:
    made = Job.from_fields({**dataclasses.asdict(_claimed()), "payload": None})
    built = dataclasses.replace(_claimed(), payload=None)  # type: ignore[arg-type]
    assert hash(made) == hash(built)
    assert made.claim == built.claim
