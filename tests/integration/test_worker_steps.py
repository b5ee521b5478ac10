"""The worker loop stepped with `run_once(now)` and a hand-moved clock: no sleeping on timers."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from dominus.db.engine import create_database_engine
from dominus.errors import DatabaseError
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
from dominus.jobs.diagnostic import register_diagnostic_jobs
from tests.support.clock import FakeClock
from tests.support.draining import drain, wait_until_idle

NO_JITTER = RetryPolicy(base_seconds=10, max_seconds=100, jitter=0)


def make_worker(
    store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock, **overrides: Any
) -> Worker:
    settings: dict[str, Any] = {
        "concurrency": 4,
        "poll_interval_seconds": 5,
        "heartbeat_interval_seconds": 15,
        "max_running_age_seconds": 300,
        "retry_policy": NO_JITTER,
        "progress_interval_seconds": 1,
    }
    settings.update(overrides)
    return Worker(store, registry, WorkerConfig(**settings), clock=clock)


def settle(worker: Worker, clock: FakeClock) -> None:
    """Let running handlers return, then record their outcomes in one tick."""
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())


def test_a_worker_drains_the_queue(
    store: SqlJobStore, queue: JobQueue, registry: HandlerRegistry, clock: FakeClock
) -> None:
    ids = [queue.enqueue_job("diag.noop").job_id for _ in range(30)]
    worker = make_worker(store, registry, clock)
    assert drain(worker, clock=clock) == 30
    for job_id in ids:
        job = store.get_job(job_id)
        assert (job.status, job.attempts, job.result) == (JobStatus.COMPLETED, 1, {})
        assert job.locked_by == worker.id


def test_failures_retry_after_the_backoff_then_succeed(
    store: SqlJobStore, queue: JobQueue, registry: HandlerRegistry, clock: FakeClock
) -> None:
    job_id = queue.enqueue_job("diag.fail", {"fail_times": 2}).job_id
    worker = make_worker(store, registry, clock)
    worker.run_once(clock())
    settle(worker, clock)
    job = store.get_job(job_id)
    assert job.status is JobStatus.PENDING and job.attempts == 1
    assert (job.run_at - clock.now).total_seconds() == 10  # base × 2^0, no jitter
    clock.advance(9)
    assert worker.run_once(clock()).claimed == 0
    clock.advance(1)
    assert worker.run_once(clock()).claimed == 1
    settle(worker, clock)
    clock.advance(20)  # second failure: base × 2^1
    worker.run_once(clock())
    settle(worker, clock)
    done = store.get_job(job_id)
    assert done.status is JobStatus.COMPLETED and done.attempts == 3
    assert done.result == {"failures_before_success": 2}


def test_max_attempts_three_runs_the_handler_three_times_then_dead_letters(
    store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock
) -> None:
    calls: list[int] = []
    counting = HandlerRegistry()

    class Empty(BaseModel):
        pass

    def always_fails(_payload: Empty, context: JobContext) -> None:
        calls.append(context.job.attempts)
        raise RuntimeError(f"attempt {context.job.attempts} broke")

    counting.register("test.fails", always_fails, Empty, max_attempts=3)
    queue = JobQueue(store, counting, clock=clock)
    job_id = queue.enqueue_job("test.fails").job_id
    worker = make_worker(store, counting, clock)
    for _ in range(5):
        worker.run_once(clock())
        settle(worker, clock)
        clock.advance(1000)
    assert calls == [1, 2, 3]
    job = store.get_job(job_id)
    assert job.status is JobStatus.FAILED
    [entry] = store.list_dead_letters()
    assert entry.attempts == 3
    assert [error.message for error in entry.errors] == [
        f"RuntimeError: attempt {attempt} broke" for attempt in (1, 2, 3)
    ]
    assert all("Traceback" in (error.traceback or "") for error in entry.errors)


def test_timeouts_abort_the_handler_and_count_as_a_failed_attempt(
    store: SqlJobStore, queue: JobQueue, registry: HandlerRegistry, clock: FakeClock
) -> None:
    job_id = queue.enqueue_job("diag.sleep", {"seconds": 60}, timeout_seconds=2).job_id
    worker = make_worker(store, registry, clock)
    worker.run_once(clock())
    clock.advance(1)
    worker.run_once(clock())
    assert store.get_job(job_id).status is JobStatus.RUNNING
    clock.advance(1.5)
    worker.run_once(clock())  # past the deadline: the abort signal is set
    settle(worker, clock)
    job = store.get_job(job_id)
    assert job.status is JobStatus.PENDING and job.attempts == 1
    assert job.last_error is not None and job.last_error.startswith("timed out after 2 s")
    assert [event.kind for event in store.job_events(job_id)] == [
        EventKind.FAILED,
        EventKind.RETRY_SCHEDULED,
    ]


def test_cancelling_a_running_job_aborts_it(
    store: SqlJobStore, queue: JobQueue, registry: HandlerRegistry, clock: FakeClock
) -> None:
    job_id = queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    worker = make_worker(store, registry, clock, cancel_check_interval_seconds=0.5)
    worker.run_once(clock())
    queue.cancel(job_id)
    clock.advance(0.5)
    worker.run_once(clock())  # sees the request, sets the abort signal
    settle(worker, clock)
    job = store.get_job(job_id)
    assert job.status is JobStatus.CANCELLED
    assert [event.kind for event in store.job_events(job_id)] == [
        EventKind.CANCEL_REQUESTED,
        EventKind.CANCELLED,
    ]


def test_a_handler_that_ignores_its_abort_is_cancelled_when_it_returns(
    store: SqlJobStore, queue: JobQueue, registry: HandlerRegistry, clock: FakeClock
) -> None:
    job_id = queue.enqueue_job("diag.ignore_abort", {"seconds": 0.3}).job_id
    worker = make_worker(store, registry, clock)
    worker.run_once(clock())
    queue.cancel(job_id)
    clock.advance(1)
    worker.run_once(clock())
    assert store.get_job(job_id).status is JobStatus.RUNNING  # still inside its sleep
    settle(worker, clock)
    job = store.get_job(job_id)
    assert job.status is JobStatus.CANCELLED and job.result is None
    last = store.job_events(job_id)[-1]
    assert last.kind is EventKind.CANCELLED and "dropped" in (last.message or "")


def test_a_worker_that_lost_its_claim_aborts_and_its_outcome_is_dropped(
    store: SqlJobStore, queue: JobQueue, registry: HandlerRegistry, clock: FakeClock
) -> None:
    job_id = queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    worker = make_worker(store, registry, clock)
    worker.run_once(clock())
    # Another worker, seeing no heartbeat for 10 minutes, reclaims the job.
    store.reclaim_stale(clock.advance(600), 300, lambda _type, _attempt: 3600)
    worker.run_once(clock())  # the heartbeat shows the claim is gone → abort (lost)
    settle(worker, clock)
    job = store.get_job(job_id)
    assert job.status is JobStatus.PENDING
    kinds = [event.kind for event in store.job_events(job_id)]
    assert kinds[:2] == [EventKind.RECLAIMED, EventKind.RETRY_SCHEDULED]
    assert EventKind.LOST in kinds


def test_progress_is_saved_throttled_and_the_last_value_is_kept(
    store: SqlJobStore, clock: FakeClock
) -> None:
    registry = HandlerRegistry()
    step = threading.Event()
    proceed = threading.Event()

    class Empty(BaseModel):
        pass

    def reports(_payload: Empty, context: JobContext) -> str:
        for done in range(1, 4):
            context.progress(done=done, total=3)
        step.set()
        proceed.wait(10)
        return "ok"

    registry.register("test.progress", reports, Empty)
    queue = JobQueue(store, registry, clock=clock)
    job_id = queue.enqueue_job("test.progress").job_id
    worker = make_worker(store, registry, clock)
    worker.run_once(clock())
    assert step.wait(10)
    # Three reports within the throttle interval: only the first reached the database.
    assert store.get_job(job_id).progress == {"done": 1, "total": 3}
    proceed.set()
    settle(worker, clock)
    job = store.get_job(job_id)
    assert job.status is JobStatus.COMPLETED and job.result == "ok"
    assert job.progress == {"done": 3, "total": 3}


def test_bad_results_and_payloads_fail_the_attempt(store: SqlJobStore, clock: FakeClock) -> None:
    registry = HandlerRegistry()

    class NeedsNumber(BaseModel):
        number: int

    def returns_a_set(_payload: NeedsNumber, _context: JobContext) -> object:
        return {1, 2}

    registry.register("test.set", returns_a_set, NeedsNumber, max_attempts=1)
    queue = JobQueue(store, registry, clock=clock)
    good = queue.enqueue_job("test.set", {"number": 1}).job_id
    worker = make_worker(store, registry, clock)
    drain(worker, clock=clock)
    job = store.get_job(good)
    assert job.status is JobStatus.FAILED
    assert "not JSON serializable" in (job.last_error or "")


def test_database_errors_back_off_and_never_stop_the_loop(
    database_path: Path, registry: HandlerRegistry, clock: FakeClock
) -> None:
    engine = create_database_engine(f"sqlite:///{database_path}", busy_timeout_ms=20)
    store = SqlJobStore(engine)
    queue = JobQueue(store, registry, clock=clock)
    queue.enqueue_job("diag.noop")
    worker = make_worker(store, registry, clock, poll_interval_seconds=1)
    blocker = sqlite3.connect(database_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        delays = []
        for _ in range(4):
            assert worker.run_once(clock()).failed
            delays.append(worker._backoff_until - clock())  # type: ignore[operator]
            clock.now = worker._backoff_until  # type: ignore[assignment]
        seconds = [delay.total_seconds() for delay in delays]
        for number, delay in enumerate(seconds, start=1):
            expected = 1 * 2 ** (number - 1)
            assert expected * 0.8 <= delay <= expected * 1.2
        # Inside the backoff window the tick does not touch the database at all.
        assert worker.run_once(clock()).failed
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    clock.now = worker._backoff_until  # type: ignore[assignment]
    assert not worker.run_once(clock()).failed
    assert worker._backoff.consecutive_failures == 0
    drain(worker, clock=clock)
    assert store.list_jobs()[0].status is JobStatus.COMPLETED
    engine.dispose()


def test_unexpected_errors_in_a_tick_are_survived(
    store: SqlJobStore,
    queue: JobQueue,
    registry: HandlerRegistry,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    queue.enqueue_job("diag.noop")
    worker = make_worker(store, registry, clock)
    original = store.settle

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(store, "settle", broken)
    assert worker.run_once(clock()).failed
    monkeypatch.setattr(store, "settle", original)
    clock.advance(60)
    assert drain(worker, clock=clock) == 1


def test_diag_registry_is_opt_in() -> None:
    assert len(HandlerRegistry()) == 0
    assert "diag.crash" in register_diagnostic_jobs(HandlerRegistry())


def test_the_loop_does_not_spin_while_backing_off_or_past_a_timeout(
    database_path: Path, registry: HandlerRegistry, clock: FakeClock
) -> None:
    engine = create_database_engine(f"sqlite:///{database_path}", busy_timeout_ms=20)
    store = SqlJobStore(engine)
    queue = JobQueue(store, registry, clock=clock)
    queue.enqueue_job("diag.ignore_abort", {"seconds": 0.5}, timeout_seconds=1)
    worker = make_worker(store, registry, clock, heartbeat_interval_seconds=1)
    worker.run_once(clock())
    clock.advance(2)  # past the job's deadline, and its heartbeat is due
    blocker = sqlite3.connect(database_path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        assert worker.run_once(clock()).failed  # aborts the job, then the database is busy
        next_tick = worker._next_duty(clock())
        assert next_tick == worker._backoff_until
        assert next_tick is not None and next_tick > clock()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    clock.now = worker._backoff_until
    worker.run_once(clock())
    # The job ignores its abort and is still running: its past deadline must not count.
    assert worker._next_duty(clock()) > clock()
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())
    engine.dispose()


def test_a_settle_that_committed_while_the_worker_saw_an_error_loses_nothing(
    store: SqlJobStore,
    queue: JobQueue,
    registry: HandlerRegistry,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The connection dies after the server committed the tick's transaction: its completions
    landed and its claims were made, but the worker saw an error. The next tick settles the same
    completions again (they count as landed, not lost) and gives back the claims it never saw
    (not left to go stale and be reclaimed as a crash, with an attempt spent)."""
    first = [queue.enqueue_job("diag.noop").job_id for _ in range(2)]
    worker = make_worker(store, registry, clock, concurrency=2)
    worker.run_once(clock())
    assert wait_until_idle(worker, 10)
    later = [queue.enqueue_job("diag.noop").job_id for _ in range(2)]
    original = store.settle

    def committed_then_cut_off(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        raise DatabaseError("server closed the connection unexpectedly")

    monkeypatch.setattr(store, "settle", committed_then_cut_off)
    assert worker.run_once(clock()).failed
    assert [store.get_job(job_id).status for job_id in first + later] == [
        JobStatus.COMPLETED
    ] * 2 + [JobStatus.RUNNING] * 2
    monkeypatch.setattr(store, "settle", original)
    clock.advance(60)

    assert drain(worker, clock=clock) == 2
    for job_id in first + later:
        job = store.get_job(job_id)
        assert (job.status, job.attempts) == (JobStatus.COMPLETED, 1)
    for job_id in first:
        assert store.job_events(job_id) == []
    for job_id in later:
        assert [event.kind for event in store.job_events(job_id)] == [EventKind.RELEASED]
