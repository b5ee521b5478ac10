"""A worker woken for a job its own clock says is not due yet (ADR 0062).

On PostgreSQL every process keeps the server's time by extrapolating its own reading of it
(`DatabaseClock`), so two processes' clocks differ by up to their readings' round trips: a few
milliseconds. A job enqueued by a process whose clock runs ahead carries a `run_at` that a woken
worker whose clock runs behind does not yet see as due. The NOTIFY carries the earliest `run_at`
it announces, and the worker claims again at that moment of its own clock, instead of at the next
poll. SQLite has no such skew: every process reads the host's one clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import make_url

from dominus.db.engine import create_database_engine
from dominus.jobs import (
    HandlerRegistry,
    Job,
    JobQueue,
    JobStatus,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.clock import utc_now
from dominus.jobs.notifications import PostgresListener
from tests.support.clock import FakeClock
from tests.support.draining import wait_until_idle
from tests.support.polling import wait_until
from tests.support.running_worker import RunningWorker

# The worker's clock lags the enqueuer's by far more than a real skew, so that the woken claim
# cannot see the job as due however slowly the machine delivers the notification.
LAG = timedelta(seconds=2)
# Anything picked up sooner than this was not found by the regular poll.
POLL_SECONDS = 60


@pytest.fixture
def lagging_worker(
    database_url: str, store: SqlJobStore, registry: HandlerRegistry
) -> Iterator[RunningWorker]:
    conninfo = make_url(database_url).set(drivername="postgresql")
    worker = Worker(
        store,
        registry,
        WorkerConfig(concurrency=2, poll_interval_seconds=POLL_SECONDS),
        clock=lambda: utc_now() - LAG,
        watcher=PostgresListener(conninfo.render_as_string(hide_password=False)),
    )
    running = RunningWorker(worker)
    yield running
    if running.thread.is_alive():
        running.stop()


@pytest.mark.backends("postgresql")
def test_a_worker_whose_clock_lags_picks_up_a_notified_job_when_it_falls_due(
    database_url: str,
    store: SqlJobStore,
    registry: HandlerRegistry,
    lagging_worker: RunningWorker,
) -> None:
    wait_until(lambda: len(store.list_workers()) == 1)
    time.sleep(0.1)  # let the worker finish its first poll and go idle
    other_engine = create_database_engine(database_url)
    try:
        other_queue = JobQueue(SqlJobStore(other_engine), registry)  # another process's clock
        job_id = other_queue.enqueue_job("diag.noop").job_id
        # Well before the poll: only the notification's run_at can have brought the worker back.
        wait_until(
            lambda: store.get_job(job_id).status is JobStatus.COMPLETED,
            timeout=POLL_SECONDS / 3,
            message="the job picked up before the next poll",
        )
    finally:
        other_engine.dispose()
    lagging_worker.stop()


def finish(worker: Worker, clock: FakeClock) -> None:
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())


def stepped_worker(store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock) -> Worker:
    # Heartbeats less often than polls, so that the next poll is the next duty.
    config = WorkerConfig(
        poll_interval_seconds=POLL_SECONDS,
        heartbeat_interval_seconds=2 * POLL_SECONDS,
        max_running_age_seconds=20 * POLL_SECONDS,
    )
    return Worker(store, registry, config, clock=clock)


def notified_worker(
    store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock, due_in: timedelta
) -> tuple[Worker, Job]:
    """A worker that has registered and polled (its next poll a minute away), woken for a job
    enqueued by a process whose clock reads `due_in` ahead of the worker's, as its change watcher
    wakes it (with the job's run_at)."""
    worker = stepped_worker(store, registry, clock)
    worker.run_once(clock())
    due_at = clock() + due_in
    job_id = JobQueue(store, registry, clock=lambda: due_at).enqueue_job("diag.noop").job_id
    worker.wake(due_at)
    return worker, store.get_job(job_id)


@pytest.mark.backends("sqlite", "postgresql")
def test_a_wake_up_for_a_job_not_yet_due_claims_it_at_its_run_at(
    store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock
) -> None:
    worker, job = notified_worker(store, registry, clock, timedelta(milliseconds=5))
    assert worker.run_once(clock()).claimed == 0  # not due by this worker's clock
    assert worker._next_duty(clock()) == job.run_at
    clock.now = job.run_at
    assert worker.run_once(clock()).claimed == 1
    assert store.get_job(job.id).status is JobStatus.RUNNING
    finish(worker, clock)


def test_a_notified_job_that_fell_due_before_the_loop_looked_is_claimed_at_once(
    store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock
) -> None:
    worker, job = notified_worker(store, registry, clock, timedelta(milliseconds=5))
    clock.now = job.run_at + timedelta(milliseconds=1)  # the loop was busy meanwhile
    assert worker.run_once(clock()).claimed == 1
    finish(worker, clock)


def test_a_wake_up_for_a_job_due_long_after_the_next_poll_leaves_it_to_the_polls(
    store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock
) -> None:
    next_poll = clock() + timedelta(seconds=POLL_SECONDS)
    worker, _ = notified_worker(store, registry, clock, timedelta(days=1))  # nothing remembered
    assert worker.run_once(clock()).claimed == 0
    assert worker._next_duty(clock()) == next_poll
    finish(worker, clock)


def test_a_due_time_in_the_past_claims_at_the_next_tick(
    store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock
) -> None:
    worker, job = notified_worker(store, registry, clock, timedelta(seconds=-1))
    assert worker.run_once(clock()).claimed == 1
    assert store.get_job(job.id).status is JobStatus.RUNNING
    finish(worker, clock)
