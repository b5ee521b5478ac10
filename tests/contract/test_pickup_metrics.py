"""Store and worker contract: every attempt a worker completes or fails records how long after
it became due (its run_at, or its creation if later; a retry's run_at is its retry time) it
started, in the pickup histogram."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import BaseModel

from dominus.jobs import (
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    RetryPolicy,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.metrics_model import MetricTotals
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain

pytestmark = pytest.mark.backends("sqlite", "postgresql")


class Nothing(BaseModel):
    pass


def pickup_registry() -> HandlerRegistry:
    """`test.ok` returns; `test.flaky` fails its first attempt and completes its second."""
    calls: list[int] = []

    def ok(_payload: Nothing, _context: JobContext) -> None:
        return None

    def flaky(_payload: Nothing, _context: JobContext) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first attempt fails")

    registry = HandlerRegistry()
    registry.register("test.ok", ok, Nothing)
    registry.register("test.flaky", flaky, Nothing, max_attempts=2)
    return registry


def buckets(totals: MetricTotals, job_type: str) -> dict[str, float]:
    return dict(totals.pickup_histograms[job_type])


def test_each_started_attempt_records_its_pickup(store: SqlJobStore, clock: FakeClock) -> None:
    registry = pickup_registry()
    queue = JobQueue(store, registry, clock=clock)
    queue.enqueue_job("test.ok", {})  # due at T0, picked up 40 s late
    queue.enqueue_job("test.ok", {}, run_at=T0 + timedelta(seconds=10))  # due at T0 + 10: 30 s
    flaky = queue.enqueue_job("test.flaky", {}).job_id  # its first attempt: 40 s
    clock.advance(40)
    queue.enqueue_job("test.ok", {}, run_at=T0)  # created now, run_at in the past: due now, 0 s
    config = WorkerConfig(concurrency=4, retry_policy=RetryPolicy(10, 10, jitter=0))
    worker = Worker(store, registry, config, clock=clock)
    assert drain(worker, clock=clock) == 4
    retry_at = store.get_job(flaky).run_at
    assert retry_at == clock() + timedelta(seconds=10)
    clock.now = retry_at + timedelta(seconds=25)  # the retry: 25 s after its retry time
    assert drain(worker, clock=clock) == 1
    assert store.get_job(flaky).status is JobStatus.COMPLETED

    totals = store.metric_totals()
    assert totals.pickups["test.ok"] == (70.0, 3.0)
    ok = buckets(totals, "test.ok")
    assert (ok["0.005"], ok["10"], ok["30"], ok["60"], ok["+Inf"]) == (1, 1, 2, 3, 3)
    assert totals.pickups["test.flaky"] == (65.0, 2.0)  # the failed attempt counts too
    flaky_buckets = buckets(totals, "test.flaky")
    assert (flaky_buckets["10"], flaky_buckets["30"], flaky_buckets["60"]) == (0, 1, 2)
    # The duration histogram is the run time, not the wait: both attempts ran at once here.
    assert totals.durations["test.ok"] == (0.0, 3.0)
