"""A worker cut off from a stalled database, as it was found: one real `dominus worker`, four
1 s jobs on their only attempt, and another process that holds the database for 10 s (SQLite:
the write lock of `BEGIN IMMEDIATE`; PostgreSQL: an exclusive lock on the queue table) while the
jobs finish. The
stall lasts longer than JOB_MAX_RUNNING_AGE_MS; the results must be recorded once it ends, not
reclaimed (before the fix all four ended failed in the dead-letter queue)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from sqlalchemy import make_url

from dominus.jobs import JobQueue, JobStatus, SqlJobStore
from tests.e2e.conftest import DominusProcesses, wait_until

pytestmark = pytest.mark.slow

STALL_SECONDS = 10.0


@contextmanager
def database_held(database_url: str) -> Iterator[None]:
    """Another process's transaction that blocks every write to the queue until it ends."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        blocker = sqlite3.connect(url.database or "", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        return
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo) as blocker:
        blocker.execute("LOCK TABLE job_queue IN ACCESS EXCLUSIVE MODE")
        try:
            yield
        finally:
            blocker.rollback()


def test_results_finished_during_a_long_stall_are_recorded(
    dominus_procs: DominusProcesses,
    store: SqlJobStore,
    e2e_queue: JobQueue,
    database_url: str,
) -> None:
    worker = dominus_procs.start_worker(
        env={
            "WORKER_CONCURRENCY": "4",
            "JOB_MAX_RUNNING_AGE_MS": "3000",
            "JOB_HEARTBEAT_INTERVAL_MS": "500",
            "JOB_QUEUE_POLL_INTERVAL_MS": "5000",
        }
    )
    worker.worker_id()
    ids = [
        e2e_queue.enqueue_job("diag.sleep", {"seconds": 1}, max_attempts=1).job_id for _ in range(4)
    ]

    def all_started() -> bool:
        started = {job_id for job_id, _, _ in worker.job_lines("started")}
        return started >= set(ids)

    wait_until(all_started, 30, message="the four jobs to start")
    with database_held(database_url):
        time.sleep(STALL_SECONDS)  # the handlers return after 1 s; nothing can be recorded

    def recorded() -> bool:
        return all(store.get_job(job_id).status.is_terminal for job_id in ids)

    wait_until(recorded, 60, message=lambda: f"the jobs to end: {store.list_jobs()}")
    for job_id in ids:
        job = store.get_job(job_id)
        assert (job.status, job.attempts) == (JobStatus.COMPLETED, 1), job
        assert [event.kind.value for event in store.job_events(job_id)] == []
    assert store.list_dead_letters(include_requeued=True) == []
    assert "outcome dropped" not in worker.stderr()
    assert worker.is_running()
    assert worker.stop(30) == 0
