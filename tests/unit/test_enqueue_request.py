"""`EnqueueRequest`'s own __init__ makes the request the frozen dataclass's generated one would."""

from __future__ import annotations

import inspect
from dataclasses import MISSING, FrozenInstanceError, field, fields, make_dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dominus.jobs import EnqueueRequest

# The class `@dataclass(frozen=True)` makes of the same fields, with its generated __init__.
Generated: Any = make_dataclass(
    "Generated",
    [
        (each.name, each.type)
        if each.default is MISSING
        else (each.name, each.type, field(default=each.default))
        for each in fields(EnqueueRequest)
    ],
    frozen=True,
)

_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "payload": st.none() | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        "priority": st.none() | st.integers(),
        "max_attempts": st.none() | st.integers(),
        "run_at": st.none() | st.just(datetime(2030, 1, 1, tzinfo=UTC)),
        "dedupe_key": st.none() | st.text(max_size=5),
        "timeout_seconds": st.none() | st.floats(allow_nan=False),
        "queue": st.none() | st.text(max_size=5),
        "concurrency_key": st.none() | st.text(max_size=5),
        "concurrency_limit": st.none() | st.integers(),
        "rate_key": st.none() | st.text(max_size=5),
    },
)


def _parameters(cls: type) -> list[tuple[str, Any, Any, Any]]:
    return [
        (parameter.name, parameter.kind, parameter.default, parameter.annotation)
        for parameter in inspect.signature(cls).parameters.values()
    ]


def test_its_init_takes_the_generated_init_s_parameters() -> None:
    assert _parameters(EnqueueRequest) == _parameters(Generated)


@given(job_type=st.text(max_size=5), options=_OPTIONS, positional=st.booleans())
def test_a_request_holds_what_the_generated_init_would_set(
    job_type: str, options: dict[str, Any], positional: bool
) -> None:
    if positional:  # every field in order, up to the last one given
        names = [each.name for each in fields(EnqueueRequest)][1:]
        given_up_to = max((names.index(name) + 1 for name in options), default=0)
        values = [options.get(name) for name in names[:given_up_to]]
        request, generated = EnqueueRequest(job_type, *values), Generated(job_type, *values)
    else:
        request, generated = EnqueueRequest(job_type, **options), Generated(job_type, **options)
    assert vars(request) == vars(generated)
    assert list(vars(request)) == list(vars(generated))
    assert request == EnqueueRequest(job_type, **options)
    assert repr(request) == repr(generated).replace("Generated", "EnqueueRequest", 1)


def test_a_request_stays_frozen_hashable_and_replaceable() -> None:
    request = EnqueueRequest("t", priority=3)
    with pytest.raises(FrozenInstanceError):
        request.priority = 4  # type: ignore[misc]
    assert hash(request) == hash(EnqueueRequest("t", priority=3))
    assert replace(request, payload={"n": 1}) == EnqueueRequest("t", {"n": 1}, priority=3)
    with pytest.raises(TypeError):
        EnqueueRequest()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        EnqueueRequest("t", unknown=1)  # type: ignore[call-arg]
