"""Store and worker contract: a handler that raises Snooze(seconds) puts its job back to pending,
due `seconds` later, without spending an attempt and without recording an error; the snooze is
fenced on the attempt's claim like a completion."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import BaseModel

from dominus.jobs import (
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    RetryPolicy,
    Snooze,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.model import Snoozed
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain
from tests.support.jobs import claimed_job, kinds

pytestmark = pytest.mark.backends("sqlite", "postgresql")


class Naps(BaseModel):
    naps: int


def snoozing_registry(calls: list[int]) -> HandlerRegistry:
    """`test.nap` snoozes 30 s `naps` times, then returns how many calls it took; `test.anap` is
    its `async def` twin."""

    def nap(payload: Naps, _context: JobContext) -> int:
        calls.append(len(calls) + 1)
        if len(calls) <= payload.naps:
            raise Snooze(30)
        return len(calls)

    async def anap(payload: Naps, context: JobContext) -> int:
        return nap(payload, context)

    registry = HandlerRegistry()
    registry.register("test.nap", nap, Naps, max_attempts=1)
    registry.register("test.anap", anap, Naps, max_attempts=1)
    return registry


@pytest.mark.parametrize("job_type", ["test.nap", "test.anap"])
def test_a_snooze_keeps_the_attempt_and_records_no_error(
    store: SqlJobStore, clock: FakeClock, job_type: str
) -> None:
    calls: list[int] = []
    registry = snoozing_registry(calls)
    job_id = JobQueue(store, registry, clock=clock).enqueue_job(job_type, {"naps": 2}).job_id
    config = WorkerConfig(concurrency=1, retry_policy=RetryPolicy(0, 0, jitter=0))
    worker = Worker(store, registry, config, clock=clock)
    for nap in (1, 2):
        drain(worker, clock=clock)
        job = store.get_job(job_id)
        # max_attempts is 1: had the snooze spent the attempt, the job would be dead-lettered.
        assert (job.status, job.attempts, job.failure_count) == (JobStatus.PENDING, 0, 0)
        assert job.last_error is None
        assert job.locked_by is None
        assert job.run_at == clock() + timedelta(seconds=30)
        assert kinds(store, job_id) == [EventKind.SNOOZED] * nap
        assert drain(worker, clock=clock) == 0  # not due yet
        clock.advance(30)
    assert drain(worker, clock=clock) == 1
    done = store.get_job(job_id)
    assert (done.status, done.attempts, done.result) == (JobStatus.COMPLETED, 1, 3)
    assert store.list_dead_letters() == []
    [event, _] = store.job_events(job_id)
    assert event.message == "snoozed for 30 s by its handler; the attempt was not counted"


def test_a_snooze_from_a_lost_claim_is_refused_by_the_fence(store: SqlJobStore) -> None:
    job = claimed_job(store, worker="w1")
    later = T0 + timedelta(minutes=10)
    [reclaimed] = store.reclaim_stale(later, 60, lambda _type, _attempt: 0)
    assert reclaimed.job_id == job.id
    [again] = store.claim("w2", ["diag.noop"], 1, later)
    assert again.attempts == 2
    snooze = Snoozed(job.claim, run_at=later + timedelta(hours=1), seconds=3600)
    accepted, _ = store.settle([snooze], later)
    assert accepted == [False]
    current = store.get_job(job.id)
    assert (current.status, current.locked_by, current.attempts) == (JobStatus.RUNNING, "w2", 2)
    assert current.run_at != later + timedelta(hours=1)
    assert kinds(store, job.id)[-1] is EventKind.LOST


def test_a_snooze_of_the_held_claim_lands(store: SqlJobStore) -> None:
    job = claimed_job(store)
    accepted, _ = store.settle([Snoozed(job.claim, run_at=T0 + timedelta(seconds=5))], T0)
    assert accepted == [True]
    pending = store.get_job(job.id)
    assert (pending.status, pending.attempts, pending.run_at) == (
        JobStatus.PENDING,
        0,
        T0 + timedelta(seconds=5),
    )
    assert store.claim("w1", ["diag.noop"], 1, T0) == []
    [claimed] = store.claim("w1", ["diag.noop"], 1, T0 + timedelta(seconds=5))
    assert claimed.attempts == 1


@pytest.mark.parametrize(
    ("seconds", "error"),
    [(-1, ValueError), (float("nan"), ValueError), (8 * 86_400, ValueError), ("5", TypeError)],
)
def test_a_snooze_needs_a_sensible_number_of_seconds(seconds: object, error: type) -> None:
    with pytest.raises(error):
        Snooze(seconds)  # type: ignore[arg-type]
