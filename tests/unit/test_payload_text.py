"""A claimed job carries its payload's JSON text, decoded only when `payload` is read, and a
handler's payload model validates that text itself when it takes what the dict would give."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from enum import Enum, IntEnum
from typing import Any, cast

import pytest
from pydantic import BaseModel, ConfigDict

from dominus.jobs.client import EnqueueRequest, JobQueue
from dominus.jobs.context import JobContext
from dominus.jobs.execution import (
    RunningJob,
    run_async_handler,
    run_handler,
    validated_payload,
)
from dominus.jobs.model import Job
from dominus.jobs.payload_text import validates_text_as_dict
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.sql.rows import JOB_FIELD_NAMES, job_from_fields
from dominus.jobs.store import JobStore
from tests.support.jobs import attempt_of, running_job

T0 = datetime(2026, 12, 6, 8, 0, tzinfo=UTC)


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Step(BaseModel):
    name: str
    at: datetime
    tags: list[str] = []


class Rich(BaseModel):
    """Most of what a payload model holds, and no bytes."""

    when: datetime
    day: date
    span: timedelta
    colour: Colour
    level: Level
    first: Step
    steps: list[Step]
    count: int | None = None
    note: str | None = None
    maybe_step: Step | None = None
    ratio: float
    amount: Decimal
    ref: uuid.UUID
    numbers: tuple[int, ...] = ()
    names: set[str] = set()
    by_id: dict[int, float] = {}
    extra: dict[str, Any] = {}


RICH_PAYLOADS = [
    {
        "when": "2026-01-02T03:04:05.123456+02:00",
        "day": "2024-02-29",
        "span": "PT3.5S",
        "colour": "red",
        "level": 2,
        "first": {"name": "a", "at": "2026-01-01T00:00:00Z", "tags": ["x", "y"]},
        "steps": [{"name": "b", "at": "2026-01-01T00:00:00"}],
        "count": 3,
        "note": 'café ☕ \u2028 "quoted" \\ slash',
        "maybe_step": {"name": "c", "at": "2026-06-01T12:00:00-05:00"},
        "ratio": 1,
        "amount": "1.10",
        "ref": "12345678-1234-5678-1234-567812345678",
        "numbers": [3, 1, 2],
        "names": ["p", "q"],
        "by_id": {"1": 2.5, "20": 1e-7},
        "extra": {"deep": [1, 2.5, None, True, {"big": 12345678901234567890123}]},
    },
    {  # the optional fields left out
        "when": "2026-01-02T03:04:05Z",
        "day": "2026-12-31",
        "span": "P1DT2H",
        "colour": "blue",
        "level": 1,
        "first": {"name": "only", "at": "2026-01-01T00:00:00.5+00:00"},
        "steps": [],
        "ratio": 0.1,
        "amount": "-0.000001",
        "ref": "00000000-0000-0000-0000-000000000000",
    },
]


def _stored_text(model: type[BaseModel], payload: dict[str, Any]) -> str:
    """The payload's text as enqueue stores it (validated and dumped by the model)."""
    registry = HandlerRegistry()
    registry.register("t", lambda _payload, _context: None, model)
    new_job = JobQueue(cast(JobStore, None), registry).build(EnqueueRequest("t", payload), T0)
    return new_job.payload_json


def _claimed(payload_text: str, job_type: str = "t") -> Job:
    """A job as a claim reads it: every field decoded but the payload, given as its text."""
    job = running_job(1, job_type, at=T0, started_at=T0, heartbeat_at=T0)
    fields: list[Any] = [getattr(job, name) for name in JOB_FIELD_NAMES]
    fields[JOB_FIELD_NAMES.index("payload")] = payload_text
    fields[JOB_FIELD_NAMES.index("status")] = job.status.value
    return job_from_fields(fields, lambda value: value, json.loads)


def _running(job: Job, registry: HandlerRegistry) -> RunningJob:
    return attempt_of(job, registry.get(job.job_type), claimed_at=T0)


def _fields_and_types(model: BaseModel) -> dict[str, tuple[type, Any]]:
    return {name: (type(value), value) for name, value in model}


# --- the job ---------------------------------------------------------------------------------
def test_a_claimed_job_decodes_its_payload_when_first_read_and_keeps_the_dict() -> None:
    job = _claimed('{"i": 1, "nested": {"t": [1.5, "x"]}}')
    assert job.payload_text == '{"i": 1, "nested": {"t": [1.5, "x"]}}'
    assert "payload" not in vars(job)  # nothing decoded yet

    payload = job.payload
    assert payload == {"i": 1, "nested": {"t": [1.5, "x"]}}
    assert job.payload is payload  # decoded once
    assert job.payload_text is None  # the dict is what the job's payload is now


def test_a_claimed_job_is_equal_to_and_shows_as_the_job_made_with_its_dict() -> None:
    text = '{"b": [1, 2], "a": "x"}'
    made = dataclasses.replace(_claimed(text), payload={"b": [1, 2], "a": "x"})
    assert made.payload_text is None
    assert repr(_claimed(text)) == repr(made)
    assert _claimed(text) == made
    assert dataclasses.asdict(_claimed(text)) == dataclasses.asdict(made)
    assert dataclasses.replace(_claimed(text), attempts=2) == dataclasses.replace(made, attempts=2)
    assert _claimed(text) != dataclasses.replace(made, payload={"a": "x"})


def test_a_job_made_with_its_dict_has_no_payload_text() -> None:
    assert dataclasses.replace(_claimed("{}"), payload={"i": 1}).payload_text is None


# --- which models validate the text ------------------------------------------------------------
@pytest.mark.parametrize("payload", RICH_PAYLOADS, ids=["every field", "optional fields left out"])
def test_the_text_enqueue_stored_validates_as_its_decoded_dict(payload: dict[str, Any]) -> None:
    assert validates_text_as_dict(Rich)
    text = _stored_text(Rich, payload)

    from_text = Rich.model_validate_json(text)
    from_dict = Rich.model_validate(json.loads(text))

    assert from_text == from_dict
    assert _fields_and_types(from_text) == _fields_and_types(from_dict)
    assert _fields_and_types(from_text.first) == _fields_and_types(from_dict.first)
    assert from_text.model_dump_json() == from_dict.model_dump_json()


class EitherTimeOrText(BaseModel):
    at: datetime | str


class Strict(BaseModel):
    model_config = ConfigDict(strict=True)

    at: datetime


class WithBytes(BaseModel):
    data: bytes


class Nested(BaseModel):
    inner: EitherTimeOrText


@pytest.mark.parametrize("model", [EitherTimeOrText, Strict, WithBytes, Nested])
def test_a_model_whose_validation_depends_on_the_input_mode_reads_the_dict(
    model: type[BaseModel],
) -> None:
    assert not validates_text_as_dict(model)


def test_a_smart_union_is_why_the_dict_is_kept_for_it() -> None:
    # The reason: from the text a datetime-like string is a datetime, from the dict a str.
    text = '{"at": "2026-01-01T00:00:00Z"}'
    assert isinstance(EitherTimeOrText.model_validate_json(text).at, datetime)
    assert isinstance(EitherTimeOrText.model_validate(json.loads(text)).at, str)

    registry = HandlerRegistry()
    registry.register("either", lambda _payload, _context: None, EitherTimeOrText)
    running = _running(_claimed(text, "either"), registry)
    assert validated_payload(running) == EitherTimeOrText(at="2026-01-01T00:00:00Z")


# --- the handler ---------------------------------------------------------------------------------
def test_a_handler_gets_the_model_the_dict_made_and_the_job_decodes_nothing() -> None:
    seen: list[Rich] = []
    registry = HandlerRegistry()
    registry.register("t", lambda payload, _context: seen.append(payload), Rich)
    text = _stored_text(Rich, RICH_PAYLOADS[0])
    running = _running(_claimed(text), registry)

    assert running.begin(T0)
    finished = run_handler(running, lambda: T0)

    assert finished.error is None, finished.error
    assert _fields_and_types(seen[0]) == _fields_and_types(Rich.model_validate(json.loads(text)))
    assert running.job.payload_text == text  # validated from the text: no dict was made


def test_a_handler_reading_its_job_sees_the_payload_dict() -> None:
    seen: list[dict[str, Any]] = []

    def handler(_payload: Rich, context: JobContext) -> None:
        seen.append(context.job.payload)

    registry = HandlerRegistry()
    registry.register("t", handler, Rich)
    text = _stored_text(Rich, RICH_PAYLOADS[1])
    running = _running(_claimed(text), registry)
    assert running.begin(T0)
    assert run_handler(running, lambda: T0).error is None
    assert seen == [json.loads(text)]


def test_a_payload_read_before_the_handler_is_validated_from_its_dict() -> None:
    registry = HandlerRegistry()
    registry.register("t", lambda payload, _context: payload.count, Rich)
    text = _stored_text(Rich, RICH_PAYLOADS[0])
    job = _claimed(text)
    job.payload["count"] = 7  # read (and changed) by someone before the handler ran
    running = _running(job, registry)
    assert running.begin(T0)
    assert run_handler(running, lambda: T0).value == 7


def test_an_invalid_payload_text_fails_the_attempt_as_the_dict_did() -> None:
    registry = HandlerRegistry()
    registry.register("t", lambda _payload, _context: None, Step)
    running = _running(_claimed('{"name": "x"}'), registry)
    assert running.begin(T0)
    finished = run_handler(running, lambda: T0)
    assert finished.error is not None
    assert finished.error.startswith("ValidationError")
    assert "at\n  Field required" in finished.error


def test_an_async_handler_gets_the_model_from_the_text() -> None:
    seen: list[Rich] = []

    async def handler(payload: Rich, _context: JobContext) -> None:
        seen.append(payload)

    registry = HandlerRegistry()
    registry.register("t", handler, Rich)
    text = _stored_text(Rich, RICH_PAYLOADS[0])
    running = _running(_claimed(text), registry)
    assert running.begin(T0)

    # Not asyncio.run: on leaving, it looks up the SIGINT handler, whose failed enum lookup
    # writes the repr of the main task's result (this attempt, its job and so its payload).
    loop = asyncio.new_event_loop()
    try:
        finished = loop.run_until_complete(run_async_handler(running, lambda: T0))
    finally:
        loop.close()

    assert finished.error is None, finished.error
    assert _fields_and_types(seen[0]) == _fields_and_types(Rich.model_validate(json.loads(text)))
    assert running.job.payload_text == text
