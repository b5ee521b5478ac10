"""Nesting and size limits on user JSON (`dominus.jobs.json_limits`) and the enqueue path that
applies them: a deep or huge payload is an InvalidPayloadError, never a RecursionError."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from dominus.errors import InvalidPayloadError
from dominus.jobs import JobQueue, SqlJobStore
from dominus.jobs.client import integral_floats_as_ints
from dominus.jobs.json_limits import (
    MAX_JSON_DEPTH,
    MAX_PAYLOAD_BYTES,
    loads_limited,
    text_nests_deeper_than,
    value_nests_deeper_than,
)

TRICKY_STRINGS = ["[", "]{", '\\"[', "\\\\", "}}}]]]", 'a"b', "[[[[[[[[[[" * 10, "\u2028{"]


def depth_of(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    return 0


def random_document(rng: random.Random, depth: int) -> Any:
    """A value exactly `depth` containers deep, with brackets and quotes inside its strings."""
    if depth == 0:
        return rng.choice([1, 2.5, None, True, rng.choice(TRICKY_STRINGS)])
    # Siblings stay shallow, so the document grows linearly with its depth.
    inner = [random_document(rng, rng.randrange(min(depth, 3))) for _ in range(rng.randrange(3))]
    inner.append(random_document(rng, depth - 1))
    rng.shuffle(inner)
    if rng.random() < 0.5:
        return inner
    return {f"{rng.choice(TRICKY_STRINGS)}{index}": item for index, item in enumerate(inner)}


def nested_text(depth: int, opener: str = "[", closer: str = "]") -> bytes:
    return (opener * depth + closer * depth).encode()


def test_the_text_scan_agrees_with_the_parsed_depth() -> None:
    rng = random.Random(9)
    for _ in range(300):
        document = random_document(rng, rng.randrange(1, 90))
        depth = depth_of(document)
        text = json.dumps(document).encode()
        for limit in (depth - 1, depth, MAX_JSON_DEPTH):
            assert text_nests_deeper_than(text, limit) is (depth > limit), (limit, text[:200])
            assert value_nests_deeper_than(document, limit) is (depth > limit)


@pytest.mark.parametrize("depth", [65, 1_000, 100_000])
def test_deep_text_is_found_without_parsing(depth: int) -> None:
    assert text_nests_deeper_than(nested_text(depth))
    objects = ('{"a":' * depth + "1" + "}" * depth).encode()
    assert text_nests_deeper_than(objects)


def test_shallow_or_malformed_text_is_left_to_the_parser() -> None:
    assert not text_nests_deeper_than(nested_text(MAX_JSON_DEPTH))
    # Brackets inside strings, escaped quotes included, are not nesting.
    assert not text_nests_deeper_than(json.dumps(["[" * 1000, '\\"[' * 1000]).encode())
    # A closer with nothing open: the parser stops there, whatever follows.
    assert not text_nests_deeper_than(b"]" + nested_text(1000))
    # An unterminated string hides the rest, as it would from the parser.
    assert not text_nests_deeper_than(b'["' + b"[" * 1000)


def test_a_self_referencing_value_is_too_deep_not_endless() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    assert value_nests_deeper_than(loop)


def test_integral_floats_as_ints_refuses_deep_values_instead_of_overflowing_the_stack() -> None:
    shallow: Any = 3.0
    for _ in range(MAX_JSON_DEPTH):
        shallow = [shallow]
    assert json.dumps(integral_floats_as_ints(shallow)).count("3]") == 1
    with pytest.raises(ValueError, match=f"more than {MAX_JSON_DEPTH} levels"):
        integral_floats_as_ints([shallow])
    deep: Any = {}
    for _ in range(5_000):
        deep = {"a": deep}
    with pytest.raises(ValueError, match=f"more than {MAX_JSON_DEPTH} levels"):
        integral_floats_as_ints(deep)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
        ('{"a":' * 1_000 + "1" + "}" * 1_000, "nested more than 64 levels deep"),
        ('{"a": "' + "x" * MAX_PAYLOAD_BYTES + '"}', "over the limit of 1,048,576"),
        ("{oops", "is not valid JSON"),
    ],
    ids=["deep-arrays", "deep-objects", "too-big", "invalid"],
)
def test_loads_limited_refuses_with_one_clear_error(text: str, problem: str) -> None:
    with pytest.raises(InvalidPayloadError, match="--payload") as caught:
        loads_limited(text, "--payload")
    assert problem in caught.value.message


def deep_payload(depth: int) -> dict[str, Any]:
    payload: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        payload = {"a": payload}
    return payload


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 500, 1_000, 20_000])
def test_enqueue_refuses_a_deep_payload_before_walking_it(
    queue: JobQueue, store: SqlJobStore, depth: int
) -> None:
    with pytest.raises(InvalidPayloadError) as caught:
        queue.enqueue_job("diag.sleep", deep_payload(depth))
    assert caught.value.message == (
        "invalid payload for diag.sleep: it is nested more than 64 levels deep"
    )
    assert store.list_jobs() == []


def test_enqueue_refuses_a_payload_over_the_size_limit(queue: JobQueue, store: SqlJobStore) -> None:
    with pytest.raises(InvalidPayloadError, match="over the limit of 1,048,576"):
        queue.enqueue_job("diag.fail", {"message": "x" * MAX_PAYLOAD_BYTES})
    assert store.list_jobs() == []


def test_a_payload_at_the_depth_limit_reaches_its_model(queue: JobQueue) -> None:
    # 64 levels is allowed: the model, not the depth limit, refuses the unknown field.
    with pytest.raises(InvalidPayloadError, match="a: Extra inputs are not permitted"):
        queue.enqueue_job("diag.sleep", deep_payload(MAX_JSON_DEPTH))
