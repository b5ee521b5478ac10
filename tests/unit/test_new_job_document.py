"""A validated job carries its payload's JSON text, written once at validation; a copy with
another payload never carries the old text."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, fields, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError, field_serializer

from dominus.errors import InvalidPayloadError
from dominus.jobs import EnqueueRequest, HandlerRegistry, JobQueue
from dominus.jobs.client import _flat_json_ready, _validated_payload, integral_floats_as_ints
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


def test_a_job_made_from_its_fields_is_the_job_its_init_makes() -> None:
    named: dict[str, Any] = {
        "job_type": "diag.noop",
        "payload": {"n": 1},
        "priority": 2,
        "max_attempts": 3,
    }
    options: dict[str, Any] = {
        "run_at": NOW,
        "dedupe_key": "d",
        "timeout_seconds": 1.5,
        "queue": "q",
    }
    limits: dict[str, Any] = {"concurrency_key": "k", "concurrency_limit": 4, "rate_key": "r"}
    made = NewJob(**named, **options, **limits).with_payload_document('{"n": 1}')
    job = NewJob.from_fields({**named, **options, **limits, "payload_document": '{"n": 1}'})
    assert job == made and repr(job) == repr(made)
    assert job.payload_json == made.payload_json == '{"n": 1}'
    assert replace(job, payload={"n": 2}) == replace(made, payload={"n": 2})
    assert replace(job, payload={"n": 2}).payload_json == '{"n": 2}'
    with pytest.raises(FrozenInstanceError):
        job.priority = 5  # type: ignore[misc]


@pytest.mark.parametrize("via_type_options", [False, True])
def test_a_built_job_holds_every_field_of_its_own(via_type_options: bool) -> None:
    # Made from a dict of its fields: one left out would read the class's default unnoticed.
    registry = HandlerRegistry()
    registry.register("numbers", lambda _payload, _context: None, Numbers)
    queue = JobQueue(store=None, registry=registry)  # type: ignore[arg-type]  # build writes nothing
    job = (
        queue._build_with_type_options("numbers", {"n": 3}, NOW, False)
        if via_type_options
        else queue.build(EnqueueRequest("numbers", {"n": 3}), NOW)
    )
    assert list(vars(job)) == [field.name for field in fields(NewJob)]


def test_the_text_written_at_validation_is_the_validated_payload_dumped() -> None:
    registry = HandlerRegistry()
    registry.register("numbers", lambda _payload, _context: None, Numbers)
    queue = JobQueue(store=None, registry=registry)  # type: ignore[arg-type]  # build writes nothing
    job = queue.build(EnqueueRequest("numbers", {"n": 3.0}), NOW)
    assert job.payload == {"n": 3, "x": 0.5}
    assert job.payload_json == '{"n": 3, "x": 0.5}'


class Loose(BaseModel):
    """Takes any JSON value in any field: what it dumps is what it was sent."""

    model_config = ConfigDict(extra="allow")


class Floats(BaseModel):
    t: float
    i: int = 0


class Flags(BaseModel):
    flag: int

    @field_serializer("flag")
    def as_bool(self, value: int) -> bool:
        return bool(value)  # dumps `1` as `true`: equal to what was sent, not the same JSON


class Nested(BaseModel):
    inner: dict[str, float]


def _built(model: type[BaseModel], payload: dict[str, Any]) -> NewJob:
    registry = HandlerRegistry()
    registry.register("kind", lambda _payload, _context: None, model)
    queue = JobQueue(store=None, registry=registry)  # type: ignore[arg-type]  # build writes nothing
    return queue.build(EnqueueRequest("kind", payload), NOW)


# Text a payload may hold: UTF-8 (no lone surrogate), no NUL; both are refused, as tested elsewhere.
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"))
FLAT_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)


@given(st.dictionaries(TEXT, FLAT_SCALARS))
def test_the_stored_text_of_a_flat_payload_is_its_dump_encoded(payload: dict[str, Any]) -> None:
    job = _built(Loose, payload)
    assert job.payload_json == json.dumps(job.payload)


@pytest.mark.parametrize(
    ("model", "payload", "stored"),
    [
        (Floats, {"t": 3, "i": 1}, '{"t": 3.0, "i": 1}'),  # an int sent, a float dumped
        (Floats, {"t": 3.0}, '{"t": 3.0, "i": 0}'),  # the default added
        (Floats, {"i": 1, "t": 0.5}, '{"t": 0.5, "i": 1}'),  # the model's order, not the sender's
        (Floats, {"t": -0.0}, '{"t": 0.0, "i": 0}'),
        (Flags, {"flag": 1}, '{"flag": true}'),  # equal in Python, not in JSON
        (Loose, {"a": 1, "b": True, "c": None}, '{"a": 1, "b": true, "c": null}'),
        (Loose, {"text": 'é\u2028\\u0000"\n'}, '{"text": "\\u00e9\\u2028\\\\u0000\\"\\n"}'),
        (Nested, {"inner": {"a": 1}}, '{"inner": {"a": 1.0}}'),  # nested: the general path
        (Loose, {"list": [1, 2.5, True]}, '{"list": [1, 2.5, true]}'),
    ],
)
def test_the_stored_text_is_what_the_model_dumped(
    model: type[BaseModel], payload: dict[str, Any], stored: str
) -> None:
    job = _built(model, payload)
    assert job.payload_json == stored
    assert job.payload_json == json.dumps(job.payload)


def _reference(model: type[BaseModel], payload: dict[str, Any]) -> tuple[dict[str, Any], str]:
    # The payload's path written plainly: encoded strictly, validated, dumped, encoded again.
    document = json.dumps(integral_floats_as_ints(payload), allow_nan=False)
    dumped = model.model_validate_json(document, strict=True).model_dump(mode="json")
    return dumped, json.dumps(dumped)


ANY_FLOATS = st.floats(allow_nan=True, allow_infinity=True)


@given(st.dictionaries(st.sampled_from(["t", "i", "other"]), st.one_of(FLAT_SCALARS, ANY_FLOATS)))
@pytest.mark.parametrize("model", [Loose, Floats, Flags])
def test_a_flat_payload_is_validated_and_stored_as_written_plainly(
    model: type[BaseModel], payload: dict[str, Any]
) -> None:
    try:
        expected = _reference(model, payload)
    except (ValueError, ValidationError) as error:
        with pytest.raises(InvalidPayloadError) as refused:
            _validated_payload(model, payload, "kind")
        if not isinstance(error, ValidationError):  # pydantic's own message is reworded
            assert str(refused.value) == f"invalid payload for kind: {error}"
        return
    assert _validated_payload(model, payload, "kind") == expected


@given(st.dictionaries(TEXT, st.one_of(FLAT_SCALARS, ANY_FLOATS)))
def test_a_flat_payload_is_made_ready_as_integral_floats_as_ints_makes_it(
    payload: dict[str, Any],
) -> None:
    sent = list(payload.items())
    ready = _flat_json_ready(payload)
    expected = integral_floats_as_ints(payload)
    assert ready is not None
    assert list(ready.items()) == list(expected.items())
    assert list(map(type, ready.values())) == list(map(type, expected.values()))
    assert list(payload.items()) == sent  # the caller's payload is never changed
    assert list(map(type, payload.values())) == [type(value) for _key, value in sent]


class OwnDump(BaseModel):
    n: int

    def model_dump(self, **options: Any) -> dict[str, Any]:
        return {"n": self.n * 10}


class OwnValidate(BaseModel):
    n: int

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **options: Any) -> Any:
        return cls(n=-1)


@pytest.mark.parametrize(("model", "stored"), [(OwnDump, '{"n": 30}'), (OwnValidate, '{"n": -1}')])
def test_a_model_with_its_own_json_methods_is_validated_and_dumped_by_them(
    model: type[BaseModel], stored: str
) -> None:
    assert _validated_payload(model, {"n": 3}, "kind")[1] == stored
