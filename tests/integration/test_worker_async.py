"""`async def` handlers on the worker's event loop (ADR 0029), in the real loop on both backends:
they complete, fail and retry, share the concurrency with sync handlers without a thread each,
and are cancelled by every abort (cancel request, timeout, shutdown) as sync handlers are."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from dominus.jobs import (
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    RetryPolicy,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from tests.support.polling import wait_until
from tests.support.running_worker import RunningWorker

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# Generous: the figures these tests show are far below them; they only stop a hung test.
SAFETY_SECONDS = 20


@pytest.fixture
def live_queue(store: SqlJobStore, registry: HandlerRegistry) -> JobQueue:
    return JobQueue(store, registry)


@pytest.fixture
def start_worker(
    store: SqlJobStore, registry: HandlerRegistry, live_queue: JobQueue
) -> Iterator[Callable[..., RunningWorker]]:
    started: list[RunningWorker] = []

    def start(**overrides: Any) -> RunningWorker:
        settings: dict[str, Any] = {
            "concurrency": 2,
            "poll_interval_seconds": 60,  # long: the queue's subscription wakes the worker
            "heartbeat_interval_seconds": 0.2,
            "max_running_age_seconds": 5,
            "cancel_check_interval_seconds": 0.5,
            "graceful_shutdown_timeout_seconds": 5,
            # Long: a handler that its cancellation did not stop makes `stop()` fail (the worker
            # would wait this long before giving up on it) instead of being recorded anyway.
            "abort_grace_seconds": 60,
            "retry_policy": RetryPolicy(base_seconds=0.05, max_seconds=0.1),
        }
        settings.update(overrides)
        running = RunningWorker(Worker(store, registry, WorkerConfig(**settings)))
        live_queue.subscribe(running.worker.wake)
        started.append(running)
        return running

    yield start
    for running in started:
        if running.thread.is_alive():
            running.stop()


def status_of(store: SqlJobStore, job_id: int) -> JobStatus:
    return store.get_job(job_id).status


@pytest.fixture
def loop_threads() -> Callable[[], list[threading.Thread]]:
    """The handler loop threads started since the test began (a worker stepped by an earlier
    test in this process, never stopped, may still have its own)."""
    before = set(threading.enumerate())

    def started_since() -> list[threading.Thread]:
        return [
            thread
            for thread in threading.enumerate()
            if thread.name.endswith("-async") and thread not in before
        ]

    return started_since


def test_an_async_job_completes_with_its_result(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    loop_threads: Callable[[], list[threading.Thread]],
) -> None:
    running = start_worker()
    job_id = live_queue.enqueue_job("diag.async_sleep", {"seconds": 0.05}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.COMPLETED, SAFETY_SECONDS)
    assert store.get_job(job_id).result == {"slept_seconds": 0.05}
    running.stop()
    assert not loop_threads(), "the handler loop's thread outlived its worker"


def test_an_async_job_that_fails_is_retried_like_a_sync_one(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
) -> None:
    running = start_worker()
    job_id = live_queue.enqueue_job("diag.async_fail", {"fail_times": 2}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.COMPLETED, SAFETY_SECONDS)
    job = store.get_job(job_id)
    assert job.result == {"failures_before_success": 2}
    assert job.attempts == 3
    failures = [event for event in store.job_events(job_id) if event.kind is EventKind.FAILED]
    assert len(failures) == 2
    assert "DeliberateFailureError" in (failures[0].message or "")
    running.stop()


def test_a_permanently_failing_async_job_ends_failed_after_its_last_attempt(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
) -> None:
    running = start_worker()
    job_id = live_queue.enqueue_job("diag.async_fail", {"fail_times": 9}, max_attempts=2).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.FAILED, SAFETY_SECONDS)
    assert store.get_job(job_id).attempts == 2
    running.stop()


class Note(BaseModel):
    note: str


async def complete_in_a_fenced_transaction(payload: Note, ctx: JobContext) -> str:
    def write() -> None:
        with ctx.transaction() as connection:
            ctx.complete(connection, {"wrote": payload.note})

    await asyncio.to_thread(write)  # the database call off the event loop (ADR 0029)
    return "not recorded: the transaction completed the job"


def test_an_async_handler_completes_its_job_in_a_fenced_transaction_off_the_loop(
    backend: str,
    store: SqlJobStore,
    registry: HandlerRegistry,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
) -> None:
    registry.register("test.async_fenced", complete_in_a_fenced_transaction, Note)
    running = start_worker()
    job_id = live_queue.enqueue_job("test.async_fenced", {"note": "n1"}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.COMPLETED, SAFETY_SECONDS)
    assert store.get_job(job_id).result == {"wrote": "n1"}
    running.stop()
    assert EventKind.LOST not in [event.kind for event in store.job_events(job_id)]


def test_concurrency_n_runs_n_async_handlers_at_once_without_a_thread_each(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
) -> None:
    concurrency = 50
    threads_before = threading.active_count()
    ids = [
        live_queue.enqueue_job("diag.async_sleep", {"seconds": 60}).job_id
        for _ in range(concurrency)
    ]
    running = start_worker(concurrency=concurrency, graceful_shutdown_timeout_seconds=0.1)
    running.worker.wake()
    # Started, not only dispatched: a job whose task has not begun when shutdown comes is
    # returned to pending unstarted (ADR 0033), which a loaded machine made happen here.
    wait_until(lambda: running.worker.handlers_started == concurrency, SAFETY_SECONDS)
    assert len(store.list_jobs(status=JobStatus.RUNNING, limit=1000)) == concurrency
    # One thread per job would add 50. The worker adds its loop, its maintenance thread and
    # the handler loop; `aprogress` adds at most the loop executor's few threads.
    assert threading.active_count() - threads_before < 20
    running.stop()
    assert {status_of(store, job_id) for job_id in ids} == {JobStatus.CANCELLED}


def test_sync_and_async_handlers_run_side_by_side_in_one_worker(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
) -> None:
    ids = []
    for _ in range(20):
        ids.append(live_queue.enqueue_job("diag.noop").job_id)
        ids.append(live_queue.enqueue_job("diag.async_noop").job_id)
    sleepers = [
        live_queue.enqueue_job("diag.sleep", {"seconds": 0.3}).job_id,
        live_queue.enqueue_job("diag.async_sleep", {"seconds": 0.3}).job_id,
    ]
    running = start_worker(concurrency=4)
    running.worker.wake()
    # Both sleepers hold a slot at the same time: each kind runs while the other does.
    wait_until(
        lambda: {status_of(store, job_id) for job_id in sleepers} == {JobStatus.RUNNING},
        SAFETY_SECONDS,
    )
    wait_until(
        lambda: {status_of(store, job_id) for job_id in ids + sleepers} == {JobStatus.COMPLETED},
        SAFETY_SECONDS,
    )
    running.stop()


@pytest.mark.parametrize("job_type", ["diag.async_sleep", "diag.async_swallow_cancel"])
def test_a_cancel_request_stops_a_running_async_job(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    job_type: str,
) -> None:
    running = start_worker()
    job_id = live_queue.enqueue_job(job_type, {"seconds": 60}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.RUNNING, SAFETY_SECONDS)
    wait_until(lambda: running.worker.handlers_in_flight == 1, SAFETY_SECONDS)
    live_queue.cancel(job_id)
    # The worker sees the request within its cancel check (0.5 s here); the handler's task is
    # cancelled at once: nothing is left in flight long before the job's 60 s.
    wait_until(lambda: status_of(store, job_id) is JobStatus.CANCELLED, SAFETY_SECONDS)
    assert running.worker.handlers_in_flight == 0
    assert store.get_job(job_id).result is None  # a swallowed cancel's return value is dropped
    running.stop()


def test_an_async_job_past_its_timeout_is_cancelled_and_fails(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
) -> None:
    running = start_worker()
    job_id = live_queue.enqueue_job(
        "diag.async_sleep", {"seconds": 60}, timeout_seconds=0.3, max_attempts=1
    ).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.FAILED, SAFETY_SECONDS)
    assert running.worker.handlers_in_flight == 0
    assert (store.get_job(job_id).last_error or "").startswith("timed out after 0.3 s")
    running.stop()


def test_graceful_shutdown_waits_for_running_async_jobs(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    loop_threads: Callable[[], list[threading.Thread]],
) -> None:
    running = start_worker()
    job_ids = [
        live_queue.enqueue_job("diag.async_sleep", {"seconds": 2}).job_id,
        live_queue.enqueue_job("diag.sleep", {"seconds": 2}).job_id,
    ]
    # Both handlers called, not only claimed: a job claimed ahead whose handler has not begun
    # goes back to pending at shutdown (ADR 0033), which is not what this test is about.
    wait_until(lambda: running.worker.handlers_started == 2, SAFETY_SECONDS)
    running.stop()
    assert {status_of(store, job_id) for job_id in job_ids} == {JobStatus.COMPLETED}
    assert not loop_threads()


@pytest.mark.parametrize("requeue", [False, True])
@pytest.mark.parametrize("job_type", ["diag.async_sleep", "diag.async_swallow_cancel"])
def test_async_jobs_still_running_after_the_graceful_timeout_are_cancelled_or_requeued(
    backend: str,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    requeue: bool,
    job_type: str,
    loop_threads: Callable[[], list[threading.Thread]],
) -> None:
    running = start_worker(graceful_shutdown_timeout_seconds=0.2, shutdown_requeue=requeue)
    job_id = live_queue.enqueue_job(job_type, {"seconds": 60}).job_id
    wait_until(lambda: status_of(store, job_id) is JobStatus.RUNNING, SAFETY_SECONDS)
    # Started, not only claimed: a job whose handler has not started is returned at once.
    wait_until(lambda: running.worker.handlers_started == 1, SAFETY_SECONDS)
    running.stop()
    job = store.get_job(job_id)
    if requeue:
        assert job.status is JobStatus.PENDING and job.attempts == 0
        assert store.job_events(job_id)[-1].kind is EventKind.RELEASED
    else:
        assert job.status is JobStatus.CANCELLED
        assert "shutdown" in (store.job_events(job_id)[-1].message or "")
    assert not loop_threads()
