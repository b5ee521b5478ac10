"""Store contract: a permanent failure (a handler's PermanentJobError) is not retried; the job
fails at once with its dead-letter entry, whatever attempts remain, and the counters agree."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import BaseModel

from dominus.errors import PermanentJobError
from dominus.jobs import (
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    JobStore,
    RetryPolicy,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.metrics_model import DEAD_LETTERED, FAILED
from dominus.jobs.model import Failed
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain
from tests.support.jobs import claimed_job, kinds

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_a_permanent_failure_on_attempt_1_of_3_dead_letters_at_once(store: JobStore) -> None:
    job = claimed_job(store, max_attempts=3)
    outcome = Failed(
        job.claim,
        error="PermanentJobError: thing 7 does not exist",
        traceback="Traceback: ...",
        retry_at=T0 + timedelta(seconds=10),
        permanent=True,
        job_type="diag.noop",
    )
    accepted, _ = store.settle([outcome], T0)
    assert accepted == [True]
    failed = store.get_job(job.id)
    assert (failed.status, failed.attempts, failed.failure_count) == (JobStatus.FAILED, 1, 1)
    assert failed.finished_at == T0
    assert failed.last_error == "PermanentJobError: thing 7 does not exist"
    assert kinds(store, job.id) == [EventKind.FAILED, EventKind.DEAD_LETTERED]  # no retry event
    failed_event, dead_event = store.job_events(job.id)
    assert failed_event.details == {"traceback": "Traceback: ...", "permanent": True}
    assert dead_event.message == (
        "permanent error on attempt 1 of 3, not retried; moved to the dead-letter queue"
    )
    [entry] = store.list_dead_letters()
    assert (entry.job_id, entry.attempts) == (job.id, 1)
    assert entry.last_error == "PermanentJobError: thing 7 does not exist"
    assert [error.message for error in entry.errors] == [entry.last_error]
    totals = store.metric_totals()
    assert (totals.counter(FAILED, "diag.noop"), totals.counter(DEAD_LETTERED, "diag.noop")) == (
        1,
        1,
    )
    assert store.claim("w1", ["diag.noop"], 1, T0 + timedelta(days=1)) == []  # never again


class Thing(BaseModel):
    thing_id: int


def test_a_handler_raising_it_is_not_retried_and_can_still_be_requeued(
    store: SqlJobStore, clock: FakeClock
) -> None:
    calls: list[int] = []

    def handle(payload: Thing, _context: JobContext) -> None:
        calls.append(payload.thing_id)
        raise PermanentJobError(f"thing {payload.thing_id} does not exist")

    registry = HandlerRegistry()
    registry.register("test.permanent", handle, Thing, max_attempts=3)
    queue = JobQueue(store, registry, clock=clock)
    job_id = queue.enqueue_job("test.permanent", {"thing_id": 99}).job_id
    config = WorkerConfig(concurrency=1, retry_policy=RetryPolicy(0, 0, jitter=0))
    assert drain(Worker(store, registry, config, clock=clock), clock=clock) == 1
    assert calls == [99]
    job = store.get_job(job_id)
    assert (job.status, job.attempts) == (JobStatus.FAILED, 1)
    assert job.last_error == "PermanentJobError: thing 99 does not exist"
    [entry] = store.list_dead_letters()
    assert entry.job_id == job_id
    assert (store.job_events(job_id)[0].details or {}).get("permanent") is True
    # An operator may still run it again (same job, attempts reset): requeue is not refused.
    assert queue.requeue_dead_letter(entry.id).status is JobStatus.PENDING
