"""Claiming ahead of free slots (ADR 0033): jobs claimed beyond the handler threads count as
claimed by the worker in every view, are heartbeated, can be cancelled before they start, are
returned at shutdown, start their timeout when they start, and never break the concurrency."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pydantic import BaseModel

from dominus.config import Settings
from dominus.jobs import (
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.prefetch import PrefetchBudget
from dominus.runtime import build_runtime
from tests.support.clock import FakeClock
from tests.support.draining import drain, wait_until_idle


class Note(BaseModel):
    name: str = ""


class Jobs:
    """`gated` runs until the gate opens; `noted` records that it ran; async twins of both
    record how many handlers ran at once."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.ran: list[str] = []
        self.gated_started = threading.Event()
        self._lock = threading.Lock()
        self.now_running = 0
        self.most_at_once = 0
        self.registry = register_diagnostic_jobs(HandlerRegistry())
        self.registry.register("gated", self.gated, Note)
        self.registry.register("noted", self.noted, Note)
        self.registry.register("sync_busy", self.sync_busy, Note)
        self.registry.register("async_busy", self.async_busy, Note)
        self.registry.register("async_noted", self.async_noted, Note)
        self.all_async_ran = threading.Event()
        self.async_expected = 0

    def gated(self, _payload: Note, context: JobContext) -> None:
        self.gated_started.set()
        while not self.gate.wait(0.01):
            context.abort.raise_if_set()

    def noted(self, payload: Note, _context: JobContext) -> None:
        self.ran.append(payload.name)

    def _enter(self) -> None:
        with self._lock:
            self.now_running += 1
            self.most_at_once = max(self.most_at_once, self.now_running)

    def _leave(self) -> None:
        with self._lock:
            self.now_running -= 1

    def sync_busy(self, _payload: Note, _context: JobContext) -> None:
        self._enter()
        self.gate.wait(0.005)
        self._leave()

    async def async_noted(self, payload: Note, _context: JobContext) -> None:
        self.ran.append(payload.name)
        if len(self.ran) == self.async_expected:
            self.all_async_ran.set()

    async def async_busy(self, _payload: Note, _context: JobContext) -> None:
        self._enter()
        await asyncio.sleep(0.005)
        self._leave()


@pytest.fixture
def jobs() -> Jobs:
    return Jobs()


def prefetching_worker(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock, **overrides: Any
) -> Worker:
    settings: dict[str, Any] = {
        "concurrency": 1,
        "max_prefetch": 8,
        "poll_interval_seconds": 5,
        "heartbeat_interval_seconds": 15,
        "max_running_age_seconds": 300,
        # The steps below move the clock by seconds: the jobs claimed ahead keep waiting.
        "prefetch_max_wait_seconds": 3600,
    }
    worker = Worker(store, jobs.registry, WorkerConfig(**(settings | overrides)), clock=clock)
    worker._prefetch.observe(0.0001)  # handlers have been quick: claim ahead
    return worker


def gated_then_noted(store: SqlJobStore, jobs: Jobs, clock: FakeClock, count: int) -> list[int]:
    """A gated job (taking the one handler thread) and `count` noted jobs behind it."""
    queue = JobQueue(store, jobs.registry, clock=clock)
    ids = [queue.enqueue_job("gated", priority=10).job_id]
    ids += [queue.enqueue_job("noted", {"name": f"n{i}"}).job_id for i in range(count)]
    return ids


def test_the_budget_claims_a_windows_worth_of_quick_jobs_and_none_of_slow_ones() -> None:
    budget = PrefetchBudget(max_jobs=64, window_seconds=0.02)
    assert (budget.jobs, budget.refill_below) == (0, 1)  # nothing measured yet
    budget.observe(0.00001)
    assert (budget.jobs, budget.refill_below) == (64, 32)
    for _ in range(50):
        budget.observe(0.005)
    assert (budget.jobs, budget.refill_below) == (4, 2)
    for _ in range(50):
        budget.observe(0.5)
    assert (budget.jobs, budget.refill_below) == (0, 1)
    assert PrefetchBudget(max_jobs=0, window_seconds=0.02).jobs == 0


def test_jobs_claimed_ahead_are_held_by_the_worker_and_heartbeated(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock
) -> None:
    gated, *waiting = gated_then_noted(store, jobs, clock, 3)
    worker = prefetching_worker(store, jobs, clock)
    assert worker.run_once(clock()).claimed == 4  # one slot + three ahead (budget 8)
    assert jobs.gated_started.wait(5)
    for job_id in [gated, *waiting]:
        job = store.get_job(job_id)
        assert (job.status, job.locked_by) == (JobStatus.RUNNING, worker.id)
    worker.run_once(clock.advance(16))  # a heartbeat
    for job_id in waiting:
        assert store.get_job(job_id).heartbeat_at == clock()
    assert jobs.ran == []  # still waiting behind the gated job
    jobs.gate.set()
    drain(worker, clock=clock)
    assert sorted(jobs.ran) == ["n0", "n1", "n2"]
    assert {store.get_job(job_id).status for job_id in [gated, *waiting]} == {JobStatus.COMPLETED}


def test_a_job_waiting_behind_a_long_one_is_cancelled_at_the_next_tick_without_running(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock
) -> None:
    gated, first, second = gated_then_noted(store, jobs, clock, 2)
    worker = prefetching_worker(store, jobs, clock)
    worker.run_once(clock())
    assert jobs.gated_started.wait(5)
    store.request_cancel(first, clock())
    worker.run_once(clock.advance(1))  # the cancel check
    worker.run_once(clock())  # records it
    cancelled = store.get_job(first)
    assert cancelled.status is JobStatus.CANCELLED
    assert store.get_job(gated).status is JobStatus.RUNNING  # the long one is untouched
    jobs.gate.set()
    drain(worker, clock=clock)
    assert jobs.ran == ["n1"]  # the cancelled job's handler never ran
    assert store.get_job(second).status is JobStatus.COMPLETED


def test_at_shutdown_jobs_not_started_go_back_to_pending_with_their_attempt_unspent(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock
) -> None:
    gated, *waiting = gated_then_noted(store, jobs, clock, 3)
    worker = prefetching_worker(store, jobs, clock)
    worker.run_once(clock())
    assert jobs.gated_started.wait(5)
    worker.request_shutdown()
    worker.run_once(clock())  # drain step: the waiting ones are returned at once
    for job_id in waiting:
        job = store.get_job(job_id)
        assert (job.status, job.attempts, job.locked_by) == (JobStatus.PENDING, 0, None)
        assert [event.kind for event in store.job_events(job_id)] == [EventKind.RELEASED]
    jobs.gate.set()
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())
    assert store.get_job(gated).status is JobStatus.COMPLETED
    assert jobs.ran == []


def test_a_waiting_jobs_timeout_starts_when_its_handler_does(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock
) -> None:
    queue = JobQueue(store, jobs.registry, clock=clock)
    gated = queue.enqueue_job("gated", priority=10).job_id
    timed = queue.enqueue_job("noted", {"name": "timed"}, timeout_seconds=5).job_id
    worker = prefetching_worker(store, jobs, clock)
    worker.run_once(clock())
    assert jobs.gated_started.wait(5)
    worker.run_once(clock.advance(60))  # far past the waiting job's timeout
    jobs.gate.set()
    drain(worker, clock=clock)
    for job_id in (gated, timed):
        assert store.get_job(job_id).status is JobStatus.COMPLETED
    assert jobs.ran == ["timed"]


def test_a_waiting_job_whose_claim_was_lost_never_runs(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock
) -> None:
    _gated, lost = gated_then_noted(store, jobs, clock, 1)
    worker = prefetching_worker(store, jobs, clock)
    worker.run_once(clock())
    assert jobs.gated_started.wait(5)
    # Another worker reclaims both (as if this one had been silent too long).
    reclaimed = store.reclaim_stale(clock.advance(600), 300, lambda _type, _attempt: 3600)
    assert lost in [job.job_id for job in reclaimed]
    worker.run_once(clock.advance(16))  # the heartbeat finds the claim gone
    jobs.gate.set()
    assert wait_until_idle(worker, 10)
    worker.run_once(clock())
    assert jobs.ran == []
    assert store.get_job(lost).status is JobStatus.PENDING
    assert EventKind.LOST not in [event.kind for event in store.job_events(lost)]


def test_sync_and_async_jobs_claimed_ahead_never_run_beyond_the_concurrency(
    store: SqlJobStore, jobs: Jobs
) -> None:
    queue = JobQueue(store, jobs.registry)
    ids = [
        queue.enqueue_job("async_busy" if number % 2 else "sync_busy").job_id
        for number in range(200)
    ]
    config = WorkerConfig(concurrency=3, max_prefetch=16, burst=True)
    worker = Worker(store, jobs.registry, config)
    worker._prefetch.observe(0.0001)  # claim ahead from the first claim on
    worker.run()  # burst: returns once the queue is drained
    assert jobs.most_at_once == 3
    assert {store.get_job(job_id).status for job_id in ids} == {JobStatus.COMPLETED}


def test_a_job_claimed_ahead_goes_back_after_waiting_too_long_and_is_not_claimed_again(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock
) -> None:
    """Claiming ahead bets that the jobs ahead are quick. When one is not, the jobs behind it
    go back to pending after `prefetch_max_wait_seconds` (attempt unspent) for a worker with a
    free slot, and the worker claims nothing ahead while a handler runs longer than the
    window."""
    gated, *waiting = gated_then_noted(store, jobs, clock, 2)
    worker = prefetching_worker(store, jobs, clock, prefetch_max_wait_seconds=1.0)
    worker.run_once(clock())
    assert jobs.gated_started.wait(5)
    worker.run_once(clock.advance(0.5))
    assert {store.get_job(job_id).status for job_id in waiting} == {JobStatus.RUNNING}
    worker.run_once(clock.advance(0.6))  # waited 1.1 s: returned
    for job_id in waiting:
        job = store.get_job(job_id)
        assert (job.status, job.attempts, job.locked_by) == (JobStatus.PENDING, 0, None)
        [event] = store.job_events(job_id)
        assert event.kind is EventKind.RELEASED and "waited too long" in (event.message or "")
    worker.wake()
    assert worker.run_once(clock.advance(5)).claimed == 0  # the gated job still runs
    other = Worker(store, jobs.registry, WorkerConfig(concurrency=2), clock=clock)
    assert other.run_once(clock()).claimed == 2
    assert wait_until_idle(other, 10)
    other.run_once(clock())
    jobs.gate.set()
    drain(worker, clock=clock)
    assert sorted(jobs.ran) == ["n0", "n1"]
    assert store.get_job(gated).status is JobStatus.COMPLETED


def test_async_jobs_claimed_ahead_start_one_after_another_without_the_workers_loop(
    store: SqlJobStore, jobs: Jobs, clock: FakeClock
) -> None:
    """As a pool thread takes its next sync job itself, the event loop starts the next async
    job claimed ahead when one ends: one tick of the worker's loop claims them, and they all
    run before the next tick."""
    queue = JobQueue(store, jobs.registry, clock=clock)
    ids = [queue.enqueue_job("async_noted", {"name": f"a{i}"}).job_id for i in range(6)]
    jobs.async_expected = len(ids)
    worker = prefetching_worker(store, jobs, clock)
    assert worker.run_once(clock()).claimed == 6  # one slot + five ahead (budget 8)
    assert jobs.all_async_ran.wait(10), f"only {jobs.ran} ran without another tick"
    assert jobs.ran == [f"a{i}" for i in range(6)]  # one at a time, in claim order
    drain(worker, clock=clock)
    assert {store.get_job(job_id).status for job_id in ids} == {JobStatus.COMPLETED}


@pytest.mark.backends("sqlite", "postgresql")
@pytest.mark.parametrize("chosen", [None, 7, 0])
def test_an_unset_cap_is_the_databases_own_and_a_set_one_is_kept(
    database_url: str, backend: str, chosen: int | None
) -> None:
    """SQLite's claims hold its one write lock, so it claims fewer ahead than PostgreSQL,
    whose claims lock only their rows; a cap the operator sets wins on both, 0 included."""
    runtime = build_runtime(Settings(DATABASE_URL=database_url, WORKER_MAX_PREFETCH=chosen))
    try:
        own = {"sqlite": 256, "postgresql": 1024}[backend]
        expected = own if chosen is None else chosen
        assert runtime.worker_config().max_prefetch == expected
    finally:
        runtime.engine.dispose()
