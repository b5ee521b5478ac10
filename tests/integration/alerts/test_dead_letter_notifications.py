"""Dead-lettered jobs notify: the engine calls the worker's `on_dead_letter` hook (off its loop
thread) once per job it dead-letters, and the domain side turns that into a notification."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from dominus.errors import PermanentJobError
from dominus.jobs import (
    DeadLetteredJob,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    RetryPolicy,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.notify import CompositeNotifier, LogNotifier, WebhookNotifier
from dominus.notify.dead_letters import dead_letter_hook
from tests.support.clock import FakeClock
from tests.support.draining import wait_until_idle
from tests.support.fakes.webhook_server import FakeWebhook

pytestmark = pytest.mark.backends("sqlite", "postgresql")


class Empty(BaseModel):
    pass


def broken(_payload: Empty, context: JobContext) -> None:
    raise RuntimeError(f"attempt {context.job.attempts} broke")


def hopeless(_payload: Empty, _context: JobContext) -> None:
    raise PermanentJobError("the thing it needs does not exist")


@pytest.fixture
def job_types() -> HandlerRegistry:
    registry = HandlerRegistry()
    registry.register("test.broken", broken, Empty, max_attempts=2)
    registry.register("test.hopeless", hopeless, Empty, max_attempts=5)
    return registry


@pytest.fixture
def jobs(store: SqlJobStore, job_types: HandlerRegistry, clock: FakeClock) -> JobQueue:
    return JobQueue(store, job_types, clock=clock)


def make_worker(
    store: SqlJobStore,
    registry: HandlerRegistry,
    clock: FakeClock,
    hook: Any,
    max_running_age_seconds: float = 300,
) -> Worker:
    config = WorkerConfig(
        concurrency=2,
        retry_policy=RetryPolicy(base_seconds=10, max_seconds=10, jitter=0),
        max_running_age_seconds=max_running_age_seconds,
        heartbeat_interval_seconds=15,
    )
    return Worker(store, registry, config, clock=clock, on_dead_letter=hook)


def step(worker: Worker, clock: FakeClock, seconds: float = 0) -> None:
    """Two ticks around the handlers' return, with the maintenance thread's reclaim duty at the
    same instant as the first."""
    clock.advance(seconds)
    worker.run_once(clock())
    worker.reclaim(clock())
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())
    assert worker.wait_for_hooks(10)


def test_the_hook_hears_of_a_job_once_its_last_attempt_failed(
    store: SqlJobStore, jobs: JobQueue, job_types: HandlerRegistry, clock: FakeClock
) -> None:
    told: list[DeadLetteredJob] = []
    job_id = jobs.enqueue_job("test.broken").job_id
    worker = make_worker(store, job_types, clock, told.append)
    step(worker, clock)
    assert store.get_job(job_id).status is JobStatus.PENDING
    assert told == []  # a retry is scheduled: nothing to tell yet
    step(worker, clock, 10)
    assert store.get_job(job_id).status is JobStatus.FAILED
    [notice] = told
    assert (notice.job_id, notice.job_type, notice.attempts, notice.max_attempts) == (
        job_id,
        "test.broken",
        2,
        2,
    )
    assert notice.error == "RuntimeError: attempt 2 broke"
    assert (notice.permanent, notice.reclaimed, notice.at) == (False, False, clock())
    step(worker, clock, 1000)
    assert len(told) == 1


def test_a_permanent_failure_is_told_at_once(
    store: SqlJobStore, jobs: JobQueue, job_types: HandlerRegistry, clock: FakeClock
) -> None:
    told: list[DeadLetteredJob] = []
    job_id = jobs.enqueue_job("test.hopeless").job_id
    step(make_worker(store, job_types, clock, told.append), clock)
    [notice] = told
    assert (notice.job_id, notice.attempts, notice.permanent) == (job_id, 1, True)
    assert "does not exist" in notice.error


def test_a_job_reclaimed_on_its_last_attempt_is_told_by_the_reaper(
    store: SqlJobStore, jobs: JobQueue, job_types: HandlerRegistry, clock: FakeClock
) -> None:
    told: list[DeadLetteredJob] = []
    job_id = jobs.enqueue_job("test.broken", max_attempts=1).job_id
    [claimed] = store.claim("ghost:1:dead", ["test.broken"], 1, clock())  # never heartbeats
    assert claimed.id == job_id
    worker = make_worker(store, job_types, clock, told.append, max_running_age_seconds=60)
    step(worker, clock, 61)
    assert store.get_job(job_id).status is JobStatus.FAILED
    [notice] = told
    assert (notice.job_id, notice.reclaimed, notice.max_attempts) == (job_id, True, None)
    assert "ghost:1:dead stopped heartbeating" in notice.error


def test_a_slow_hook_never_holds_up_the_loop(
    store: SqlJobStore, jobs: JobQueue, job_types: HandlerRegistry, clock: FakeClock
) -> None:
    release = threading.Event()
    told: list[int] = []

    def slow_hook(notice: DeadLetteredJob) -> None:
        release.wait(30)
        told.append(notice.job_id)

    first = jobs.enqueue_job("test.hopeless").job_id
    worker = make_worker(store, job_types, clock, slow_hook)
    worker.run_once(clock())
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())  # records the failure; the hook is now blocked
    second = jobs.enqueue_job("test.hopeless").job_id
    worker.run_once(clock.advance(5))  # the loop carries on: it claims and runs the next job
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())
    assert store.get_job(second).status is JobStatus.FAILED
    assert told == []
    release.set()
    assert worker.wait_for_hooks(10)
    assert told == [first, second]


def test_a_hook_that_raises_is_logged_and_the_worker_carries_on(
    store: SqlJobStore,
    jobs: JobQueue,
    job_types: HandlerRegistry,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def raising(_notice: DeadLetteredJob) -> None:
        raise RuntimeError("hook broke")

    worker = make_worker(store, job_types, clock, raising)
    jobs.enqueue_job("test.hopeless")
    step(worker, clock)
    later = jobs.enqueue_job("test.hopeless").job_id
    step(worker, clock, 5)
    assert store.get_job(later).status is JobStatus.FAILED
    assert sum("dead-letter hook failed" in record.getMessage() for record in caplog.records) == 2


@pytest.fixture
def webhook() -> Iterator[FakeWebhook]:
    fake = FakeWebhook()
    yield fake
    fake.close()


def test_a_dead_lettered_job_reaches_the_webhook(
    store: SqlJobStore,
    jobs: JobQueue,
    job_types: HandlerRegistry,
    clock: FakeClock,
    webhook: FakeWebhook,
) -> None:
    notifier = CompositeNotifier(
        [LogNotifier(), WebhookNotifier(webhook.url, timeout_seconds=5, retries=0)]
    )
    job_id = jobs.enqueue_job("test.hopeless").job_id
    step(make_worker(store, job_types, clock, dead_letter_hook(notifier)), clock)
    [body] = webhook.bodies()
    assert body["event"] == "job.dead_lettered"
    assert body["severity"] == "critical"
    assert body["details"]["job_id"] == job_id
    assert body["details"]["job_type"] == "test.hopeless"
    assert body["details"]["permanent"] is True
    assert body["subject"].startswith(f"job {job_id} test.hopeless dead-lettered")
