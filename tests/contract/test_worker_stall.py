"""A database stall longer than the max running age delays results but never loses them, on
both backends: the worker loop stepped with `run_once(now)` and a hand-moved clock, so the
"stall" is simply time passing between ticks with no tick able to reach the database."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import Engine

from dominus.errors import DatabaseError
from dominus.jobs import (
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.worker_config import TickReport
from tests.support.clock import FakeClock
from tests.support.draining import wait_until_idle

pytestmark = pytest.mark.backends("sqlite", "postgresql")


MAX_AGE = 3.0
HEARTBEAT = 0.5


def stall_config(**overrides: Any) -> WorkerConfig:
    values: dict[str, Any] = {
        "concurrency": 4,
        "poll_interval_seconds": 5,
        "heartbeat_interval_seconds": HEARTBEAT,
        "max_running_age_seconds": MAX_AGE,
    }
    return WorkerConfig(**(values | overrides))


def tick(worker: Worker, now: datetime) -> TickReport:
    """One tick of the loop, then the maintenance thread's reclaim duty at the same instant
    (ADR 0032: reclaim runs beside the loop, not in the tick)."""
    report = worker.run_once(now)
    worker.reclaim(now)
    return report


def assert_completed_once(store: SqlJobStore, ids: list[int]) -> None:
    for job_id in ids:
        job = store.get_job(job_id)
        assert (job.status, job.attempts) == (JobStatus.COMPLETED, 1), job
        assert store.job_events(job_id) == [], "no reclaimed or lost events"
    assert store.list_dead_letters(include_requeued=True) == []


class Gate(BaseModel):
    pass


def gated_registry(gate: threading.Event) -> HandlerRegistry:
    """diag.* plus `gated`, which runs until the test opens the gate."""
    registry = register_diagnostic_jobs(HandlerRegistry())

    def handle(_payload: Gate, context: JobContext) -> dict[str, Any]:
        while not gate.wait(0.01):
            context.abort.raise_if_set()
        return {"done": True}

    registry.register("gated", handle, Gate)
    return registry


def failing(times: int, real: Callable[..., Any]) -> Callable[..., Any]:
    """`real`, except that the first `times` calls fail as an unreachable database would."""
    calls = {"n": 0}

    def call(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] <= times:
            raise DatabaseError("database error: connection refused")
        return real(*args, **kwargs)

    return call


def test_results_held_through_a_stall_are_recorded_not_reclaimed(
    store: SqlJobStore, clock: FakeClock
) -> None:
    """Handlers finished while the database was unreachable for longer than
    the max running age; the worker's own reaper must not take those jobs back (on their last
    attempt that dead-lettered all of them) before it records their results."""
    registry = register_diagnostic_jobs(HandlerRegistry())
    queue = JobQueue(store, registry, clock=clock)
    ids = [queue.enqueue_job("diag.noop", max_attempts=1).job_id for _ in range(4)]
    worker = Worker(store, registry, stall_config(), clock=clock)
    assert worker.run_once(clock()).claimed == 4
    assert wait_until_idle(worker, 10)  # every result is in hand, none recorded yet
    clock.advance(MAX_AGE * 3)  # no tick reached the database meanwhile
    report = worker.run_once(clock())
    assert not report.failed
    assert report.settled == 4
    assert_completed_once(store, ids)


def test_running_jobs_survive_a_stall_and_finish(store: SqlJobStore, clock: FakeClock) -> None:
    """The same for jobs still running when the database comes back: heartbeated before the
    reaper looks, then completed."""
    gate = threading.Event()
    registry = gated_registry(gate)
    queue = JobQueue(store, registry, clock=clock)
    ids = [queue.enqueue_job("gated", max_attempts=1).job_id for _ in range(2)]
    worker = Worker(store, registry, stall_config(), clock=clock)
    assert worker.run_once(clock()).claimed == 2
    clock.advance(MAX_AGE * 3)
    assert not worker.run_once(clock()).failed
    gate.set()
    assert wait_until_idle(worker, 10)
    assert worker.run_once(clock()).settled == 2
    assert_completed_once(store, ids)


def test_a_worker_back_from_an_outage_does_not_reclaim_jobs_of_workers_cut_off_with_it(
    engine: Engine, store: SqlJobStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers share the database and both lose it for longer than the max running age.
    The one that gets back first must give the other a max age of good contact to heartbeat
    before it takes the other's silence for death; a worker that really died is still
    reclaimed, once that window is over."""
    gate = threading.Event()
    registry = gated_registry(gate)
    queue = JobQueue(store, registry, clock=clock)
    owner_jobs = [queue.enqueue_job("gated", max_attempts=1).job_id for _ in range(2)]
    owner_store, reaper_store = SqlJobStore(engine), SqlJobStore(engine)
    owner = Worker(owner_store, registry, stall_config(concurrency=2), clock=clock)
    assert tick(owner, clock()).claimed == 2
    dead_job = queue.enqueue_job("diag.noop", max_attempts=2).job_id
    [claimed] = store.claim("dead-host:1:abc", ["diag.noop"], 1, clock())
    assert claimed.id == dead_job
    reaper = Worker(reaper_store, registry, stall_config(concurrency=1), clock=clock)
    assert tick(reaper, clock()).claimed == 0  # registered, nothing to take

    # The outage begins: both workers' ticks fail.
    monkeypatch.setattr(owner_store, "heartbeat", failing(1, owner_store.heartbeat))
    monkeypatch.setattr(reaper_store, "heartbeat", failing(1, reaper_store.heartbeat))
    clock.advance(HEARTBEAT)
    assert tick(owner, clock()).failed
    assert tick(reaper, clock()).failed

    clock.advance(MAX_AGE * 3)  # neither worker reached the database meanwhile
    assert not tick(reaper, clock()).failed  # the reaper is back first...
    assert store.get_job(dead_job).status is JobStatus.RUNNING  # ...and judges nobody yet
    for job_id in owner_jobs:
        assert store.get_job(job_id).status is JobStatus.RUNNING

    clock.advance(HEARTBEAT)
    assert not tick(owner, clock()).failed  # the owner heartbeats its claims
    gate.set()
    assert wait_until_idle(owner, 10)
    clock.advance(MAX_AGE)  # a max age of good contact later, silence is evidence again
    tick(owner, clock())
    tick(reaper, clock())
    assert_completed_once(store, owner_jobs)
    events = [event.kind.value for event in store.job_events(dead_job)]
    assert events == ["reclaimed", "retry_scheduled"]
    assert store.get_job(dead_job).status is JobStatus.PENDING


def test_a_worker_holding_claims_retries_at_least_every_heartbeat_interval(
    engine: Engine, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backoff after failed ticks grows to 30 s, but a worker holding claims must not wait
    longer than a heartbeat interval between tries: its claims would expire meanwhile."""
    store = SqlJobStore(engine)
    gate = threading.Event()
    registry = gated_registry(gate)
    JobQueue(store, registry, clock=clock).enqueue_job("gated")
    worker = Worker(store, registry, stall_config(poll_interval_seconds=20), clock=clock)
    assert worker.run_once(clock()).claimed == 1
    monkeypatch.setattr(store, "heartbeat", failing(5, store.heartbeat))
    for _ in range(5):
        clock.advance(HEARTBEAT)
        assert worker.run_once(clock()).failed
        assert worker._backoff_until is not None
        assert (worker._backoff_until - clock()).total_seconds() <= HEARTBEAT
    gate.set()
    assert wait_until_idle(worker, 10)
    clock.now = worker._backoff_until  # type: ignore[assignment]
    assert worker.run_once(clock()).settled == 1


def test_recurring_trouble_delays_a_dead_workers_reclaim_only_by_the_troubles_length(
    engine: Engine, store: SqlJobStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Short failures every 2.5 s (less than the max age apart) used to renew the reaper's
    distrust forever, so a dead worker's job waited until the trouble stopped (the chaos run's
    finding, ADR 0026). Silence is now judged max age + the trouble's length: the dead job is
    reclaimed in the first window that allows it, while a live owner failing in the same pattern
    heartbeats in the gaps and keeps its job."""
    gate = threading.Event()
    registry = gated_registry(gate)
    queue = JobQueue(store, registry, clock=clock)
    live_job = queue.enqueue_job("gated", max_attempts=1).job_id
    owner_store, reaper_store = SqlJobStore(engine), SqlJobStore(engine)
    owner = Worker(owner_store, registry, stall_config(concurrency=1), clock=clock)
    assert tick(owner, clock()).claimed == 1
    dead_job = queue.enqueue_job("diag.noop", max_attempts=2).job_id
    [claimed] = store.claim("dead-host:1:abc", ["diag.noop"], 1, clock())
    assert claimed.id == dead_job
    died_at = clock()
    # The reaper is busy too (as workers under load are), so it retries within a heartbeat.
    reaper_job = queue.enqueue_job("gated", max_attempts=1).job_id
    reaper = Worker(reaper_store, registry, stall_config(concurrency=1), clock=clock)
    assert tick(reaper, clock()).claimed == 1
    reclaimed_at = None
    for _cycle in range(8):
        # One failed tick each (a busy or unreachable database), then 2 s of good contact.
        monkeypatch.setattr(owner_store, "heartbeat", failing(1, owner_store.heartbeat))
        monkeypatch.setattr(reaper_store, "heartbeat", failing(1, reaper_store.heartbeat))
        clock.advance(HEARTBEAT)
        assert tick(owner, clock()).failed
        assert tick(reaper, clock()).failed
        for _tick in range(4):
            clock.advance(HEARTBEAT)
            assert not tick(owner, clock()).failed
            assert not tick(reaper, clock()).failed
            if reclaimed_at is None and store.get_job(dead_job).status is JobStatus.PENDING:
                reclaimed_at = clock()
        for job_id in (live_job, reaper_job):
            assert store.get_job(job_id).status is JobStatus.RUNNING
    assert reclaimed_at is not None, "the dead worker's job was never reclaimed"
    # Max age + one failed tick's trouble + one reclaim interval and one tick of slack.
    assert (reclaimed_at - died_at).total_seconds() <= MAX_AGE + HEARTBEAT + 2 * HEARTBEAT
    gate.set()
    for worker in (owner, reaper):
        assert wait_until_idle(worker, 10)
        worker.run_once(clock())
    assert_completed_once(store, [live_job, reaper_job])


def test_a_reclaim_pass_never_takes_its_own_workers_claims_while_its_loop_is_stuck(
    store: SqlJobStore, clock: FakeClock
) -> None:
    """Reclaim runs on the maintenance thread, beside the loop (ADR 0032). While the loop is
    stuck (in a tick that does not return: a stalled database call, or a long GIL hold) its
    claims go unheartbeated: a pass must not take them for a dead worker's. It runs only while
    the worker's own last heartbeat is younger than the silence it judges by."""
    gate = threading.Event()
    registry = gated_registry(gate)
    job_id = JobQueue(store, registry, clock=clock).enqueue_job("gated", max_attempts=2).job_id
    worker = Worker(store, registry, stall_config(concurrency=1), clock=clock)
    assert worker.run_once(clock()).claimed == 1

    # The loop does not tick for twice the max age; the maintenance thread carries on.
    assert worker.reclaim(clock.advance(MAX_AGE * 2)) == []
    assert store.get_job(job_id).status is JobStatus.RUNNING

    gate.set()
    assert wait_until_idle(worker, 10)
    worker.run_once(clock.advance(HEARTBEAT))  # the loop is back: heartbeat, then settle
    worker.run_once(clock())
    assert_completed_once(store, [job_id])


@pytest.mark.backends("sqlite")
def test_a_reclaim_pass_kept_waiting_for_the_write_lock_takes_no_live_workers_job(
    database_url: str, engine: Engine, store: SqlJobStore, clock: FakeClock
) -> None:
    """Another process holds SQLite's write lock: the owner cannot heartbeat and a reclaim pass
    of another worker waits for the same lock. A pass that waited judges nothing (everyone was
    held up, perhaps since before it began); the next pass, an interval after the database
    answered, finds the owner's fresh heartbeat, and still takes a dead worker's job."""
    gate = threading.Event()
    registry = gated_registry(gate)
    queue = JobQueue(store, registry, clock=clock)
    owner_job = queue.enqueue_job("gated", max_attempts=2).job_id
    owner = Worker(store, registry, stall_config(concurrency=1), clock=clock)
    assert owner.run_once(clock()).claimed == 1
    dead_job = queue.enqueue_job("diag.noop", max_attempts=2).job_id
    [claimed] = store.claim("dead-host:1:abc", ["diag.noop"], 1, clock())
    assert claimed.id == dead_job
    reaper = Worker(SqlJobStore(engine), registry, stall_config(concurrency=1), clock=clock)

    # The owner was held up by the lock past the max age; the reaper heartbeats just before it.
    clock.advance(MAX_AGE + HEARTBEAT)
    assert reaper.run_once(clock()).claimed == 0
    locker = sqlite3.connect(database_url.removeprefix("sqlite:///"), check_same_thread=False)
    locker.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, locker.rollback)
    release.start()
    try:
        assert reaper.reclaim(clock()) == []
    finally:
        release.join()
        locker.close()
    for job_id in (owner_job, dead_job):
        assert store.get_job(job_id).status is JobStatus.RUNNING

    owner.run_once(clock.advance(0.1))  # the owner heartbeats once the lock is free
    reaper.run_once(clock())
    [reclaimed] = reaper.reclaim(clock.advance(MAX_AGE / 2))
    assert reclaimed.job_id == dead_job
    gate.set()
    assert wait_until_idle(owner, 10)
    owner.run_once(clock())
    assert_completed_once(store, [owner_job])
