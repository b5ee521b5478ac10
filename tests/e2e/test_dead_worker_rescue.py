"""Dead workers known at once by their liveness locks (`dominus.jobs.liveness`): with the default
settings (a 5-minute max running age), a SIGKILLed worker's job runs again on a live worker in
seconds, and a live worker's jobs are never taken, even when its lock connection is cut."""

from __future__ import annotations

import signal
import time
from typing import Any

import psycopg
import pytest
from sqlalchemy import make_url

from dominus.jobs import JobQueue, JobStatus, SqlJobStore
from tests.support.processes import DominusProcess, DominusProcesses, wait_running_on, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends("sqlite", "postgresql")]

# The seed's defaults, over the e2e suite's fast timings: what a user runs.
DEFAULT_TIMINGS = {
    "JOB_QUEUE_POLL_INTERVAL_MS": "5000",
    "JOB_HEARTBEAT_INTERVAL_MS": "15000",
    "JOB_MAX_RUNNING_AGE_MS": "300000",
    "JOB_RETRY_BASE_MS": "1000",
    "JOB_RETRY_MAX_MS": "600000",
}


def reclaim_messages(store: SqlJobStore, job_id: int) -> list[str]:
    return [
        event.message or "" for event in store.job_events(job_id) if event.kind.value == "reclaimed"
    ]


def start_worker(procs: DominusProcesses, name: str, concurrency: int = 2) -> DominusProcess:
    return procs.start_worker("--concurrency", str(concurrency), env=DEFAULT_TIMINGS, name=name)


def test_a_sigkilled_workers_job_runs_again_within_seconds_with_default_settings(
    dominus_procs: DominusProcesses, store: SqlJobStore, e2e_queue: JobQueue
) -> None:
    victim = start_worker(dominus_procs, "victim", concurrency=1)
    doomed = e2e_queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    wait_running_on(store, doomed, victim)
    rescuer = start_worker(dominus_procs, "rescuer")
    rescuer_id = rescuer.worker_id()
    own = e2e_queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    wait_running_on(store, own, rescuer)

    victim.send(signal.SIGKILL)
    assert victim.wait_exit(10) == -signal.SIGKILL
    killed_at = time.monotonic()
    # Far below the 300 s max running age: only the free liveness lock can explain a rescue.
    wait_running_on(store, doomed, rescuer, timeout=120)
    rescued_after = time.monotonic() - killed_at

    job = store.get_job(doomed)
    assert job.attempts == 2, f"rescued after {rescued_after:.1f} s"
    [message] = reclaim_messages(store, doomed)
    assert "died" in message and "liveness lock" in message
    assert reclaim_messages(store, own) == []  # the live worker's job stays its own
    own_job = store.get_job(own)
    assert (own_job.locked_by, own_job.attempts) == (rescuer_id, 1)


def liveness_sessions(admin: psycopg.Connection[Any]) -> int:
    """Sessions holding a worker's liveness lock (granted advisory locks of this database)."""
    row = admin.execute(
        "SELECT count(DISTINCT a.pid) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid "
        "WHERE a.application_name = 'dominus liveness' AND a.datname = current_database() "
        "AND l.locktype = 'advisory' AND l.granted"
    ).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.backends("postgresql")
def test_a_live_worker_whose_lock_connection_is_cut_keeps_its_jobs(
    dominus_procs: DominusProcesses, store: SqlJobStore, e2e_queue: JobQueue, database_url: str
) -> None:
    holder = start_worker(dominus_procs, "holder")
    job_id = e2e_queue.enqueue_job("diag.sleep", {"seconds": 12}).job_id
    wait_running_on(store, job_id, holder)
    watcher = start_worker(dominus_procs, "watcher")
    watcher.worker_id()

    conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    with psycopg.connect(conninfo, autocommit=True) as admin:
        for _ in range(3):  # three cuts, each taken again by the holder
            # Both workers hold their lock sessions again before each cut (a worker that has
            # logged its start may still be opening its first one).
            wait_until(
                lambda: liveness_sessions(admin) == 2,
                20,
                message=lambda: f"two liveness sessions, found {liveness_sessions(admin)}",
            )
            terminated = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'dominus liveness' AND datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ).fetchall()
            assert len(terminated) == 2  # the holder's and the watcher's
            wait_until(
                lambda: holder.stderr().count("liveness lock lost") >= 1,
                20,
                message=holder.describe,
            )
            time.sleep(2)  # longer than a death takes to confirm

    wait_until(
        lambda: store.get_job(job_id).status is JobStatus.COMPLETED,
        60,
        message=lambda: f"job {job_id} completed: {store.get_job(job_id)}",
    )
    job = store.get_job(job_id)
    assert (job.locked_by, job.attempts) == (holder.worker_id(), 1)
    assert reclaim_messages(store, job_id) == []
    assert holder.stop(30) == 0
    assert watcher.stop(30) == 0
