"""A validated job carries its payload's JSON text, written once at validation; a copy with
another payload never carries the old text."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from pydantic import BaseModel

from dominus.jobs import EnqueueRequest, HandlerRegistry, JobQueue
from dominus.jobs.model import NewJob

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class Numbers(BaseModel):
    n: int
    x: float = 0.5


def test_a_job_copied_with_another_payload_stores_that_payload() -> None:
    job = NewJob("diag.noop", {"n": 1}, 0, 3, NOW).with_payload_document('{"n": 1}')
    assert job.payload_json == '{"n": 1}'
    assert replace(job, payload={"n": 2}).payload_json == '{"n": 2}'
    assert NewJob("diag.noop", {}, 0, 3, NOW).payload_json == "{}"


def test_the_text_written_at_validation_is_the_validated_payload_dumped() -> None:
    registry = HandlerRegistry()
    registry.register("numbers", lambda _payload, _context: None, Numbers)
    queue = JobQueue(store=None, registry=registry)  # type: ignore[arg-type]  # build writes nothing
    job = queue.build(EnqueueRequest("numbers", {"n": 3.0}), NOW)
    assert job.payload == {"n": 3, "x": 0.5}
    assert job.payload_json == '{"n": 3, "x": 0.5}'
