"""A batch of one type's flat payloads is validated in one call of pydantic's: the jobs it
builds, and the error a bad batch raises, are those the job-by-job path builds and raises."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, field_serializer, model_validator

from dominus.errors import DominusError
from dominus.jobs import EnqueueRequest, HandlerRegistry, JobQueue
from dominus.jobs.model import EnqueueResult, NewJob

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class Numbers(BaseModel):
    n: int
    x: float = 0.5


class Mixed(BaseModel):
    s: str
    b: bool = False
    o: int | None = None


class Forbidding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n: int


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class Flags(BaseModel):
    flag: int

    @field_serializer("flag")
    def as_bool(self, value: int) -> bool:
        return bool(value)  # dumps `1` as `true`: equal to what was sent, not the same JSON


class Child(Numbers):
    pass


class Swapping(BaseModel):
    """Validates into another type (a subclass), which dumps by its own schema."""

    n: int

    @model_validator(mode="wrap")
    @classmethod
    def as_child(cls, value: Any, handler: Any) -> Any:
        made = handler(value)
        return SwappedChild.model_construct(n=made.n, extra=1) if made.n == 7 else made


class SwappedChild(Swapping):
    extra: int = 0


MODELS = [Numbers, Mixed, Forbidding, Loose, Flags, Swapping]
TEXT = st.text(st.characters(codec="utf-8"), max_size=5)  # NUL and lone surrogates included
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**66), max_value=2**66),
    st.floats(),  # NaN and infinities included: refused
    TEXT,
    st.sampled_from([0.0, -0.0, 1.0, 2.5, 7]),
)
KEYS = st.one_of(st.sampled_from(["n", "x", "s", "b", "o", "flag"]), TEXT)
PAYLOADS = st.one_of(
    # Mostly valid for one model or another: the batch's path taken, and refused now and then.
    st.fixed_dictionaries(
        {"n": st.integers(-5, 5)},
        optional={"x": SCALARS, "s": TEXT, "b": st.booleans(), "flag": st.integers(0, 2)},
    ),
    st.fixed_dictionaries({"s": TEXT}, optional={"o": SCALARS, "b": SCALARS, "n": SCALARS}),
    st.dictionaries(KEYS, SCALARS, max_size=4),
    st.dictionaries(KEYS, st.lists(SCALARS, max_size=2), max_size=1),  # not flat
    st.none(),
)


def _queue(model: type[BaseModel], store: Any = None) -> JobQueue:
    registry = HandlerRegistry()
    registry.register("kind", lambda _payload, _context: None, model)
    return JobQueue(store=store, registry=registry)


def _job_by_job(queue: JobQueue, batch: list[EnqueueRequest]) -> list[NewJob] | str:
    try:
        return [
            queue._build_request(request, NOW, f"job #{number}: ", False)
            for number, request in enumerate(batch, 1)
        ]
    except DominusError as error:
        return f"{type(error).__name__}: {error}"


def _by_batch(queue: JobQueue, batch: list[EnqueueRequest]) -> list[NewJob] | str:
    """What `enqueue_jobs` builds (the batch's path, else the job-by-job one)."""
    jobs = queue._build_flat_batch(batch, NOW, False)
    return _job_by_job(queue, batch) if jobs is None else list(jobs)


def _same_jobs(made: list[NewJob] | str, expected: list[NewJob] | str) -> None:
    assert made == expected
    if isinstance(made, list) and isinstance(expected, list):
        assert [job.payload_json for job in made] == [job.payload_json for job in expected]
        assert [list(job.payload) for job in made] == [list(job.payload) for job in expected]
        assert [[*map(type, job.payload.values())] for job in made] == [
            [*map(type, job.payload.values())] for job in expected
        ]


@settings(max_examples=300)
@given(st.sampled_from(MODELS), st.lists(PAYLOADS, min_size=2, max_size=5))
def test_a_batch_builds_the_jobs_and_raises_the_errors_of_the_job_by_job_path(
    model: type[BaseModel], payloads: list[dict[str, Any] | None]
) -> None:
    queue = _queue(model)
    batch = [EnqueueRequest("kind", payload) for payload in payloads]
    _same_jobs(_by_batch(queue, batch), _job_by_job(queue, batch))


@pytest.mark.parametrize(
    ("model", "payloads"),
    [
        (Numbers, [{"n": 1}, {"n": 2, "x": 3.0}, {"x": 1.25, "n": -4}]),
        (Mixed, [{"s": "a", "b": True}, {"s": "é", "o": None}]),
        (Loose, [{"a": 1, "b": 2.5, "c": "x", "d": None}, {"b": False}]),
    ],
)
def test_a_valid_batch_of_flat_payloads_takes_the_batch_path(
    model: type[BaseModel], payloads: list[dict[str, Any]]
) -> None:
    queue = _queue(model)
    batch = [EnqueueRequest("kind", payload) for payload in payloads]
    jobs = queue._build_flat_batch(batch, NOW, False)
    assert jobs is not None
    _same_jobs(list(jobs), _job_by_job(queue, batch))


@pytest.mark.parametrize(
    "batch",
    [
        [EnqueueRequest("kind", {"n": 1})],  # one job: not numbered
        [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("kind", {"n": 2}, priority=1)],
        [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("other", {"n": 2})],
        [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("kind", {})],
        [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("kind", Numbers(n=2))],
        [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("kind", {"n": "2"})],
        [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("kind", {"n": 2, "x": float("nan")})],
    ],
)
def test_a_batch_that_is_not_one_types_valid_flat_payloads_is_left_to_the_job_by_job_path(
    batch: list[EnqueueRequest],
) -> None:
    queue = _queue(Numbers)
    queue.registry.register("other", lambda _payload, _context: None, Numbers)
    assert queue._build_flat_batch(batch, NOW, False) is None


def test_a_subclass_made_by_a_validator_is_left_to_the_job_by_job_path() -> None:
    queue = _queue(Swapping)
    batch = [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("kind", {"n": 7})]
    assert queue._build_flat_batch(batch, NOW, False) is None
    jobs = _job_by_job(queue, batch)
    assert isinstance(jobs, list) and jobs[1].payload_json == '{"n": 7, "extra": 1}'


class _Store:
    def __init__(self) -> None:
        self.batches: list[list[NewJob]] = []

    def enqueue(self, jobs: list[NewJob], now: datetime, **_options: Any) -> list[EnqueueResult]:
        self.batches.append(list(jobs))
        return [EnqueueResult(number, True) for number, _job in enumerate(jobs, 1)]


def test_enqueue_jobs_stores_the_batch_built_in_one_call() -> None:
    store = _Store()
    queue = _queue(Numbers, store)
    queue.clock = lambda: NOW
    batch = [EnqueueRequest("kind", {"n": number, "x": 1.5}) for number in range(3)]
    results = queue.enqueue_jobs(batch)
    assert [result.job_id for result in results] == [1, 2, 3]
    assert store.batches == [_job_by_job(queue, batch)]
    assert [job.payload_json for job in store.batches[0]] == [
        f'{{"n": {number}, "x": 1.5}}' for number in range(3)
    ]


def test_a_bad_job_in_a_batch_is_named_as_the_job_by_job_path_names_it() -> None:
    store = _Store()
    queue = _queue(Numbers, store)
    batch = [EnqueueRequest("kind", {"n": 1}), EnqueueRequest("kind", {"n": "x"})]
    with pytest.raises(DominusError, match=r"^invalid payload for job #2: kind: n: "):
        queue.enqueue_jobs(batch)
    assert store.batches == []
