"""The worker's real loop (`run()`) in a thread: wake-up, shutdown, burst; on both backends."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import make_url

from dominus.db.engine import create_database_engine
from dominus.jobs import (
    EventKind,
    HandlerRegistry,
    JobQueue,
    JobStatus,
    RetryPolicy,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.clock import utc_now
from dominus.jobs.diagnostic import NoPayload
from dominus.jobs.notifications import PostgresListener
from dominus.jobs.wakeup import ChangeWatcher, SqliteDataVersionWatcher
from tests.support.polling import wait_until
from tests.support.running_worker import RunningWorker

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def change_watcher(backend: str, database_url: str) -> Callable[[], ChangeWatcher]:
    """The backend's own change watcher: PRAGMA data_version on SQLite, LISTEN on PostgreSQL."""

    def make() -> ChangeWatcher:
        if backend == "sqlite":
            return SqliteDataVersionWatcher(Path(make_url(database_url).database or ""))
        conninfo = make_url(database_url).set(drivername="postgresql")
        return PostgresListener(conninfo.render_as_string(hide_password=False))

    return make


@pytest.fixture
def start_worker(
    store: SqlJobStore, registry: HandlerRegistry
) -> Iterator[Callable[..., RunningWorker]]:
    started: list[RunningWorker] = []

    def start(watcher: Any = None, **overrides: Any) -> RunningWorker:
        settings: dict[str, Any] = {
            "concurrency": 2,
            "poll_interval_seconds": 60,  # long: anything quicker proves the wake-up path
            "heartbeat_interval_seconds": 0.2,
            "max_running_age_seconds": 2,
            "graceful_shutdown_timeout_seconds": 5,
            "abort_grace_seconds": 2,
            "retry_policy": RetryPolicy(base_seconds=0.05, max_seconds=0.1),
        }
        settings.update(overrides)
        running = RunningWorker(Worker(store, registry, WorkerConfig(**settings), watcher=watcher))
        started.append(running)
        return running

    yield start
    for running in started:
        if running.thread.is_alive():
            running.stop()


@pytest.fixture
def live_queue(store: SqlJobStore, registry: HandlerRegistry) -> JobQueue:
    """A queue on the real clock (the shared `queue` fixture runs on a fake one)."""
    return JobQueue(store, registry)


def status_of(store: SqlJobStore, job_id: int) -> JobStatus:
    return store.get_job(job_id).status


def test_an_enqueue_in_the_same_process_wakes_the_worker(
    store: SqlJobStore, live_queue: JobQueue, start_worker: Callable[..., RunningWorker]
) -> None:
    running = start_worker()
    live_queue.subscribe(running.worker.wake)
    wait_until(lambda: len(store.list_workers()) == 1)
    job_id = live_queue.enqueue_job("diag.noop").job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.COMPLETED, timeout=5)
    running.stop()


def test_an_enqueue_from_another_connection_is_seen_by_the_change_watcher(
    store: SqlJobStore,
    database_url: str,
    registry: HandlerRegistry,
    start_worker: Callable[..., RunningWorker],
    change_watcher: Callable[[], ChangeWatcher],
) -> None:
    running = start_worker(watcher=change_watcher())
    wait_until(lambda: len(store.list_workers()) == 1)
    time.sleep(0.1)  # let the worker finish its first poll and go idle
    other_engine = create_database_engine(database_url)
    other_queue = JobQueue(SqlJobStore(other_engine), registry)  # no subscription
    job_id = other_queue.enqueue_job("diag.noop").job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.COMPLETED, timeout=5)
    other_engine.dispose()
    running.stop()


def test_graceful_shutdown_waits_for_running_jobs(
    store: SqlJobStore, live_queue: JobQueue, start_worker: Callable[..., RunningWorker]
) -> None:
    running = start_worker()
    live_queue.subscribe(running.worker.wake)
    job_id = live_queue.enqueue_job("diag.sleep", {"seconds": 0.5}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.RUNNING)
    running.stop()
    assert status_of(store, job_id) is JobStatus.COMPLETED
    [worker] = store.list_workers()
    assert worker.stopped_at is not None


@pytest.mark.parametrize("requeue", [False, True])
def test_jobs_still_running_after_the_graceful_timeout_are_cancelled_or_requeued(
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    requeue: bool,
) -> None:
    running = start_worker(graceful_shutdown_timeout_seconds=0.2, shutdown_requeue=requeue)
    live_queue.subscribe(running.worker.wake)
    job_id = live_queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.RUNNING)
    # Started, not only claimed: a job whose handler has not started is returned at once.
    wait_until(lambda: running.worker.handlers_started == 1)
    running.stop()
    job = store.get_job(job_id)
    if requeue:
        assert job.status is JobStatus.PENDING and job.attempts == 0
        assert store.job_events(job_id)[-1].kind is EventKind.RELEASED
    else:
        assert job.status is JobStatus.CANCELLED
        assert "shutdown" in (store.job_events(job_id)[-1].message or "")


def test_a_handler_that_ignores_the_shutdown_abort_is_recorded_anyway(
    store: SqlJobStore, live_queue: JobQueue, start_worker: Callable[..., RunningWorker]
) -> None:
    running = start_worker(graceful_shutdown_timeout_seconds=0.1, abort_grace_seconds=0.2)
    live_queue.subscribe(running.worker.wake)
    job_id = live_queue.enqueue_job("diag.ignore_abort", {"seconds": 60}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.RUNNING)
    # Started, not only claimed: a job whose handler has not started is returned at once.
    wait_until(lambda: running.worker.handlers_started == 1)
    started = time.monotonic()
    running.stop(timeout=5)
    assert time.monotonic() - started < 5
    assert status_of(store, job_id) is JobStatus.CANCELLED


def test_burst_mode_drains_due_jobs_and_their_retries_then_exits(
    store: SqlJobStore, live_queue: JobQueue, start_worker: Callable[..., RunningWorker]
) -> None:
    ids = [live_queue.enqueue_job("diag.noop").job_id for _ in range(20)]
    ids.append(live_queue.enqueue_job("diag.fail", {"fail_times": 2}).job_id)
    running = start_worker(burst=True, concurrency=4)
    running.thread.join(20)
    assert not running.thread.is_alive(), "burst worker did not exit"
    assert {status_of(store, job_id) for job_id in ids} == {JobStatus.COMPLETED}


def test_two_workers_share_a_queue_without_running_a_job_twice(
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    change_watcher: Callable[[], ChangeWatcher],
) -> None:
    ids = [live_queue.enqueue_job("diag.noop").job_id for _ in range(300)]
    workers = [start_worker(watcher=change_watcher(), concurrency=3) for _ in range(2)]
    for running in workers:
        running.worker.wake()
    wait_until(
        lambda: len(store.list_jobs(status=JobStatus.COMPLETED, limit=1000)) == 300, timeout=30
    )
    for running in workers:
        running.stop()
    jobs = [store.get_job(job_id) for job_id in ids]
    assert all(job.attempts == 1 for job in jobs)
    assert {job.locked_by for job in jobs} <= {running.worker.id for running in workers}


def test_a_cancel_request_reaches_the_running_worker(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    change_watcher: Callable[[], ChangeWatcher],
) -> None:
    # On PostgreSQL nothing periodic could see the request in time (checks every 30 s, heartbeat
    # every 20 s): only NOTIFY can. SQLite has no push channel and checks every 0.5 s.
    running = start_worker(
        watcher=change_watcher(),
        cancel_check_interval_seconds=30 if backend == "postgresql" else 0.5,
        heartbeat_interval_seconds=20,
        max_running_age_seconds=60,
    )
    live_queue.subscribe(running.worker.wake)
    job_id = live_queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.RUNNING)
    started = time.monotonic()
    live_queue.cancel(job_id)
    wait_until(lambda: status_of(store, job_id) is JobStatus.CANCELLED, timeout=10)
    assert time.monotonic() - started < 5
    running.stop()


def test_the_maintenance_thread_reclaims_a_silent_workers_job_while_the_loop_sleeps(
    store: SqlJobStore, live_queue: JobQueue, start_worker: Callable[..., RunningWorker]
) -> None:
    """Reclaim is a duty of the maintenance thread (ADR 0032): it runs while the loop sleeps
    out a 60 s poll, and the job it brings back wakes the loop to claim it."""
    job_id = live_queue.enqueue_job("diag.noop", max_attempts=2).job_id
    [ghost] = store.claim("ghost:1:dead", ["diag.noop"], 1, utc_now())  # never heartbeats
    assert ghost.id == job_id
    running = start_worker()
    wait_until(lambda: status_of(store, job_id) is JobStatus.COMPLETED, timeout=15)
    running.stop()
    job = store.get_job(job_id)
    assert (job.attempts, job.locked_by) == (2, running.worker.id)
    kinds = [event.kind for event in store.job_events(job_id)]
    assert kinds[0] is EventKind.RECLAIMED


def test_while_it_runs_the_worker_raises_the_collectors_threshold_and_puts_it_back(
    store: SqlJobStore, registry: HandlerRegistry
) -> None:
    seen: list[int] = []
    registry.register(
        "gc.seen", lambda _payload, _context: seen.append(gc.get_threshold()[0]), NoPayload
    )
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        JobQueue(store, registry).enqueue_job("gc.seen")
        config = WorkerConfig(burst=True, poll_interval_seconds=0.05, gc_threshold=12_345)
        Worker(store, registry, config).run()
        assert seen == [12_345]
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*saved)
