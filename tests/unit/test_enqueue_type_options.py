"""A single enqueue that leaves every option to its job type builds the job `build` builds, with
the same checks: the type's options are checked once and kept, a failed check is not kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel

from dominus.errors import InvalidJobOptionError, NotEnqueueableError
from dominus.jobs import EnqueueRequest, HandlerRegistry, JobQueue
from dominus.jobs.model import EnqueueResult, NewJob
from dominus.jobs.registry import JobType

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class Work(BaseModel):
    n: int
    x: float = 0.5


class Recorder:
    """The store's enqueue, keeping the jobs instead of writing them."""

    def __init__(self) -> None:
        self.jobs: list[NewJob] = []

    def enqueue(
        self, jobs: Sequence[NewJob], now: datetime, **_options: Any
    ) -> list[EnqueueResult]:
        self.jobs.extend(jobs)
        return [EnqueueResult(job_id=len(self.jobs), created=True)]


def _queue(*job_types: JobType[Any]) -> tuple[JobQueue, Recorder]:
    store = Recorder()
    queue = JobQueue(store=store, registry=HandlerRegistry(job_types), clock=lambda: NOW)  # type: ignore[arg-type]
    return queue, store


def _type(name: str, **options: Any) -> JobType[Any]:
    return JobType(name, lambda _payload, _context: None, Work, **options)


def _fields(job: NewJob) -> dict[str, Any]:
    return {**asdict(job), "payload_json": job.payload_json}


@pytest.mark.parametrize(
    "job_type",
    [
        _type("plain"),
        _type("tuned", priority=7, max_attempts=9, timeout_seconds=2.5, queue="reports"),
        _type("keyed", concurrency_key=lambda payload: f"n:{payload['n']}", concurrency_limit=3),
        _type("unkeyed", concurrency_key=lambda _payload: None),
    ],
)
def test_a_job_left_to_its_type_is_the_job_build_makes(job_type: JobType[Any]) -> None:
    queue, store = _queue(job_type)
    for n in (1, 2):  # the second with the options kept from the first
        queue.enqueue_job(job_type.name, {"n": n})
        built = queue.build(EnqueueRequest(job_type.name, {"n": n}), NOW)
        assert _fields(store.jobs[-1]) == _fields(built)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"priority": 5000}, "priority must be between -1000 and 1000, got 5000"),
        ({"max_attempts": 5000}, "max_attempts must be between 1 and 1000, got 5000"),
        ({"timeout_seconds": -1.0}, "timeout must be between 0 and 604800 seconds, got -1.0"),
    ],
)
def test_a_type_with_an_option_out_of_range_is_refused_at_every_enqueue(
    options: dict[str, Any], message: str
) -> None:
    queue, store = _queue(_type("wrong", **options))
    for _ in range(2):
        with pytest.raises(InvalidJobOptionError) as refused:
            queue.enqueue_job("wrong", {"n": 1})
        assert str(refused.value) == message
    assert store.jobs == []


def test_an_internal_type_is_refused_unless_its_owner_enqueues() -> None:
    queue, store = _queue(_type("owned", enqueue_via="the owner"))
    with pytest.raises(NotEnqueueableError):
        queue.enqueue_job("owned", {"n": 1})
    queue.enqueue_job("owned", {"n": 1}, internal=True)
    assert [job.job_type for job in store.jobs] == ["owned"]


def test_options_kept_for_one_type_are_not_those_of_another_of_the_same_name() -> None:
    queue, store = _queue(_type("same", priority=1))
    queue.enqueue_job("same", {"n": 1})
    queue.registry = HandlerRegistry([_type("same", priority=2)])
    queue.enqueue_job("same", {"n": 1})
    assert [job.priority for job in store.jobs] == [1, 2]


@pytest.mark.parametrize(
    "job_type",
    [
        _type("plain"),
        _type("tuned", priority=7, max_attempts=9, timeout_seconds=2.5, queue="reports"),
        _type("keyed", concurrency_key=lambda payload: f"n:{payload['n']}", concurrency_limit=3),
    ],
)
def test_a_batch_left_to_its_types_is_the_jobs_build_makes(job_type: JobType[Any]) -> None:
    queue, store = _queue(job_type)
    requests = [EnqueueRequest(job_type.name, {"n": n}) for n in (1, 2, 3)]
    queue.enqueue_jobs(requests)
    built = [queue.build(request, NOW, f"job #{n}: ") for n, request in enumerate(requests, 1)]
    assert [_fields(job) for job in store.jobs] == [_fields(job) for job in built]


@pytest.mark.parametrize(
    ("job_type", "payload"),
    [
        (_type("priority", priority=5000), {"n": 1}),
        (_type("attempts", max_attempts=5000), {"n": 1}),
        (_type("timeout", timeout_seconds=0.0), {"n": 1}),
        (_type("internal", enqueue_via="the owner"), {"n": 1}),
        (_type("key", concurrency_key=lambda _payload: "has space"), {"n": 1}),
        (_type("payload"), {"n": "one"}),
    ],
)
def test_a_batch_left_to_its_types_is_refused_as_build_refuses_it(
    job_type: JobType[Any], payload: dict[str, Any]
) -> None:
    good = _type("good")
    queue, store = _queue(good, job_type)
    bad = EnqueueRequest(job_type.name, payload)
    for _ in range(2):  # the second time with the good type's options kept
        with pytest.raises(Exception) as refused:
            queue.enqueue_jobs([EnqueueRequest("good", {"n": 1}), bad])
        with pytest.raises(Exception) as expected:
            queue.build(bad, NOW, "job #2: ")
        assert type(refused.value) is type(expected.value)
        assert str(refused.value) == str(expected.value)
        assert str(refused.value).startswith("job #2: ") or job_type.name == "payload"
    assert store.jobs == []


def test_a_batch_mixing_left_and_given_options_builds_each_as_build_does() -> None:
    queue, store = _queue(_type("mixed", priority=3))
    requests = [
        EnqueueRequest("mixed", {"n": 1}),
        EnqueueRequest("mixed", {"n": 2}, priority=9, dedupe_key="two"),
        EnqueueRequest("mixed", {"n": 3}),
    ]
    queue.enqueue_jobs(requests)
    built = [queue.build(request, NOW) for request in requests]
    assert [_fields(job) for job in store.jobs] == [_fields(job) for job in built]
    assert [job.priority for job in store.jobs] == [3, 9, 3]
