"""A job enqueued without a payload gets its model's defaults, validated once per model where
nothing of the model's own runs while doing so, and validated every time where something does
(a default factory, a validator): the result must be what validating it afresh would give."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, Field, field_validator

from dominus.errors import InvalidPayloadError
from dominus.jobs import EnqueueRequest, HandlerRegistry, JobQueue
from dominus.jobs.client import _default_payload_document

NOW = datetime(2030, 1, 1, tzinfo=UTC)
_counter = itertools.count()


class Plain(BaseModel):
    limit: int = 10
    tags: list[str] = ["a"]
    label: str | None = None


class Factory(BaseModel):
    serial: int = Field(default_factory=lambda: next(_counter))


class Validated(BaseModel):
    calls: list[int] = []

    @field_validator("calls")
    @classmethod
    def _count(cls, value: list[int]) -> list[int]:
        return value


class Required(BaseModel):
    domain: str


def _queue(model: type[BaseModel]) -> JobQueue:
    registry = HandlerRegistry()
    registry.register("t", lambda _context, _payload: None, model)
    return JobQueue(store=None, registry=registry)  # type: ignore[arg-type]  # build() only


def _payload(queue: JobQueue, payload: Any = None) -> dict[str, Any]:
    return queue.build(EnqueueRequest("t", payload), NOW).payload


def test_constant_defaults_are_worked_out_once_and_each_caller_gets_its_own_copy() -> None:
    queue = _queue(Plain)
    first = _payload(queue)
    assert first == {"limit": 10, "tags": ["a"], "label": None}
    assert _default_payload_document(Plain) is not None
    first["tags"].append("changed")
    assert _payload(queue, {}) == {"limit": 10, "tags": ["a"], "label": None}
    assert _payload(queue, {"limit": 3}) == {"limit": 3, "tags": ["a"], "label": None}


@pytest.mark.parametrize("model", [Factory, Validated])
def test_defaults_that_run_code_are_validated_every_time(model: type[BaseModel]) -> None:
    assert _default_payload_document(model) is None


def test_a_default_factory_runs_for_each_job() -> None:
    queue = _queue(Factory)
    assert _payload(queue)["serial"] != _payload(queue)["serial"]


def test_a_model_that_needs_a_payload_still_says_which_field_is_missing() -> None:
    queue = _queue(Required)
    with pytest.raises(InvalidPayloadError, match="domain"):
        _payload(queue)
    assert _default_payload_document(Required) is None
