"""Liveness locks on both backends: a worker whose lock is free is found dead and its jobs
reclaimed (fenced); a worker holding its lock, one that took none, and the asking worker itself
never are; a worker whose row went away registers again at its next heartbeat."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest

from dominus.jobs import EventKind, JobStatus, SqlJobStore, WorkerInfo
from dominus.jobs.liveness import LivenessLock
from tests.support.clock import T0
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def wait_for(look: Callable[[], set[str]], timeout: float = 10) -> set[str]:
    deadline = time.monotonic() + timeout
    while not (found := look()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def no_delay(_job_type: str, _attempt: int) -> float:
    return 0.0


def register(store: SqlJobStore, worker_id: str, lock: LivenessLock | None) -> None:
    store.register_worker(
        WorkerInfo(
            worker_id,
            socket.gethostname(),
            1,
            2,
            ["diag.noop"],
            started_at=T0,
            last_seen_at=T0,
            liveness_lock=None if lock is None else lock.kind,
        )
    )


def locked(store: SqlJobStore, worker_id: str) -> LivenessLock:
    lock = store.hold_liveness(worker_id)
    assert lock is not None
    assert lock.acquire()
    assert lock.held
    return lock


HOLD_LOCK = """
import sys, time
from dominus.db.engine import create_database_engine
from dominus.jobs import SqlJobStore
lock = SqlJobStore(create_database_engine(sys.argv[1])).hold_liveness(sys.argv[2])
assert lock is not None and lock.acquire()
print(lock.kind, flush=True)
time.sleep(600)
"""


@contextmanager
def lock_held_by_a_process(store: SqlJobStore, worker_id: str) -> Iterator[subprocess.Popen[str]]:
    """`worker_id`'s liveness lock, held by a real process the test may SIGKILL."""
    url = store.engine.url.render_as_string(hide_password=False)
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, url, worker_id], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() in ("advisory", "flock")
        yield process
    finally:
        process.kill()
        process.wait(10)


def test_only_workers_whose_lock_is_free_are_found_dead(store: SqlJobStore) -> None:
    store.enqueue([new_job() for _ in range(4)], T0)
    alive = locked(store, "alive")
    with lock_held_by_a_process(store, "dead") as dead:
        for worker, lock in [("alive", alive), ("dead", alive), ("unlocked", None), ("me", None)]:
            register(store, worker, lock)
            store.claim(worker, ["diag.noop"], 1, T0)
        me = locked(store, "me")
        try:
            assert store.workers_found_dead("me") == set()
            dead.send_signal(signal.SIGKILL)
            dead.wait(10)
            found = store.workers_found_dead("me")
            if store.backend == "postgresql" and not found:
                # The server ends a killed client's session as soon as it reads the closed
                # socket: a moment after the kill, not at it.
                found = wait_for(lambda: store.workers_found_dead("me"))
            assert found == {"dead"}
            me.release()
            assert store.workers_found_dead("me") == {"dead"}  # never itself
            assert store.workers_found_dead("alive") == {"dead"}  # "me" registered lockless
        finally:
            alive.release()


def test_a_worker_without_running_jobs_is_not_looked_at(store: SqlJobStore) -> None:
    lock = locked(store, "idle")
    register(store, "idle", lock)
    lock.release()
    assert store.workers_found_dead("me") == set()


def test_the_jobs_of_a_dead_worker_are_reclaimed_fenced(store: SqlJobStore) -> None:
    store.enqueue([new_job(max_attempts=3), new_job(max_attempts=1), new_job()], T0)
    first, last = store.claim("dead", ["diag.noop"], 2, T0)
    [other] = store.claim("other", ["diag.noop"], 1, T0)
    reclaimed = store.reclaim_from_dead(["dead"], T0 + timedelta(seconds=1), no_delay)

    assert sorted(job.job_id for job in reclaimed) == [first.id, last.id]
    assert {job.job_id: job.dead_lettered for job in reclaimed} == {first.id: False, last.id: True}
    assert store.get_job(first.id).status is JobStatus.PENDING
    assert store.get_job(last.id).status is JobStatus.FAILED
    assert store.get_job(other.id).status is JobStatus.RUNNING
    [event] = [e for e in store.job_events(first.id) if e.kind is EventKind.RECLAIMED]
    assert event.worker_id == "dead" and event.attempt == 1
    assert "died" in (event.message or "") and "liveness lock" in (event.message or "")
    # Once reclaimed, the old claim holds nothing: a second reclaim finds nothing to do.
    assert store.reclaim_from_dead(["dead"], T0 + timedelta(seconds=2), no_delay) == []


def test_a_worker_whose_row_went_away_registers_again_at_its_heartbeat(
    store: SqlJobStore,
) -> None:
    info = WorkerInfo("w1", "host", 1, 2, ["diag.noop"], started_at=T0, last_seen_at=T0)
    store.register_worker(info)
    store.heartbeat("w1", [], T0 + timedelta(seconds=1), register_as=info)
    with store.engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM workers")  # a database restored under it
    assert store.list_workers() == []

    store.heartbeat("w1", [], T0 + timedelta(seconds=2), register_as=info)
    [worker] = store.list_workers(alive_since=T0 + timedelta(seconds=2))
    assert (worker.id, worker.started_at) == ("w1", T0)
    assert worker.last_seen_at == T0 + timedelta(seconds=2)
    store.heartbeat("w1", [], T0 + timedelta(seconds=3), register_as=info)
    assert len(store.list_workers()) == 1  # once
