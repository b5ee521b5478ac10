"""A worker rides out PostgreSQL going away. Each test runs a throwaway server of its own (see
`throwaway_postgres`), takes it down while a worker drains, and starts it again:

- a clean shutdown (`pg_ctl stop -m fast`) for 10 seconds: the worker lives through it, its
  LISTEN connection is lost and re-established, and every job is completed exactly once;
- a crash (`pg_ctl stop -m immediate`, no shutdown checkpoint): the hot path commits with
  `synchronous_commit = off`, so the last claims and completions before the crash may be lost.
  ADR 0005 promises that this never loses a job (at-least-once): every job still ends
  completed.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text

from dominus.jobs import EnqueueRequest, Job, JobQueue, JobStatus, SqlJobStore
from tests.support.processes import DominusProcess, DominusProcesses, wait_until
from tests.support.throwaway_postgres import ThrowawayPostgres, running

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

LISTEN_LOST = "LISTEN connection lost"
LISTEN_BACK = "LISTEN connection re-established"
CONCURRENCY = 4  # the worker's slots: at most that many claims in one transaction


@pytest.fixture
def throwaway_postgres(request: pytest.FixtureRequest) -> Iterator[ThrowawayPostgres]:
    """A server of this test's own; stopped and removed afterwards, whatever happened."""
    instance = ThrowawayPostgres()
    request.node._dominus_extra_reports = [("throwaway postgres", instance.logs)]
    with running(instance):
        yield instance


@pytest.fixture
def database_url(throwaway_postgres: ThrowawayPostgres) -> str:
    """This module's tests run on a database of the throwaway server (migrated by each test,
    with `dominus db upgrade`)."""
    return throwaway_postgres.create_database("dominus_outage")


def completed_ids(store: SqlJobStore) -> set[int]:
    with store.engine.connect() as connection:
        rows = connection.execute(text("SELECT id FROM job_queue WHERE status = 'completed'"))
        return {row.id for row in rows}


def all_jobs(store: SqlJobStore, count: int) -> list[Job]:
    return store.list_jobs(limit=count + 100)


def event_job_ids(store: SqlJobStore, kind: str) -> set[int]:
    with store.engine.connect() as connection:
        rows = connection.execute(
            text("SELECT DISTINCT job_id FROM job_events WHERE kind = :kind"), {"kind": kind}
        )
        return {row.job_id for row in rows}


def event_counts(store: SqlJobStore) -> dict[str, int]:
    with store.engine.connect() as connection:
        rows = connection.execute(text("SELECT kind, COUNT(*) AS n FROM job_events GROUP BY kind"))
        return {row.kind: row.n for row in rows}


def start_draining(
    procs: DominusProcesses,
    store: SqlJobStore,
    queue: JobQueue,
    *,
    jobs: int,
    request: EnqueueRequest,
    env: dict[str, str],
) -> tuple[DominusProcess, list[int]]:
    """Migrate, enqueue `jobs` copies of `request`, start one worker (concurrency 4) and wait
    until a tenth of them are completed."""
    procs.cli("db", "upgrade")
    ids = [result.job_id for result in queue.enqueue_jobs([request] * jobs)]
    worker = procs.start_worker("--concurrency", str(CONCURRENCY), env=env)
    worker.worker_id()
    wait_until(
        lambda: len(completed_ids(store)) >= jobs // 10,
        60,
        interval=0.02,
        message=lambda: f"{jobs // 10} jobs completed before the outage",
    )
    return worker, ids


def take_down(
    instance: ThrowawayPostgres,
    store: SqlJobStore,
    worker: DominusProcess,
    mode: str,
    seconds: float,
) -> None:
    """Stop the server (`pg_ctl stop -m MODE`), keep it down for `seconds` while checking that the
    worker lives on, and start it again."""
    instance.stop(mode)
    # The one deliberate wait: the outage itself. The worker must live through it.
    outage_ends = time.monotonic() + seconds
    while time.monotonic() < outage_ends:
        assert worker.is_running(), f"the worker exited during the outage:\n{worker.describe()}"
        time.sleep(0.2)
    instance.start()
    # The test's own pooled connections died with the server.
    store.engine.dispose()


def describe_unfinished(store: SqlJobStore, worker: DominusProcess, count: int) -> str:
    """The jobs not completed yet, and what the worker's log says about them."""
    logged = {job_id for job_id, _, _ in worker.job_lines("completed")}
    lines = [
        f"job {job.id}: {job.status.value}, attempts {job.attempts}, locked_by {job.locked_by}, "
        f"heartbeat_at {job.heartbeat_at}, started_at {job.started_at}, "
        f"completion logged by the worker: {job.id in logged}"
        for job in all_jobs(store, count)
        if job.status is not JobStatus.COMPLETED
    ]
    return f"{len(lines)} unfinished job(s):\n" + "\n".join(lines[:20])


def test_worker_survives_a_10_second_postgres_outage_and_completes_every_job_once(
    throwaway_postgres: ThrowawayPostgres,
    dominus_procs: DominusProcesses,
    store: SqlJobStore,
    e2e_queue: JobQueue,
) -> None:
    jobs = 3000
    # A max running age well above the outage (10 s, plus the reconnect backoff, plus whatever a
    # loaded CI machine adds): no job is reclaimed merely because its worker could not heartbeat
    # while the server was down. At 20 s a run under heavy load once reclaimed two jobs.
    worker, ids = start_draining(
        dominus_procs,
        store,
        e2e_queue,
        jobs=jobs,
        request=EnqueueRequest("diag.sleep", {"seconds": 0.01}),
        env={"JOB_MAX_RUNNING_AGE_MS": "60000"},
    )
    before_outage = completed_ids(store)
    assert len(before_outage) < jobs // 2, "the drain was nearly over before the outage"

    take_down(throwaway_postgres, store, worker, "fast", 10.0)
    assert LISTEN_LOST in worker.stderr()
    lost_at = worker.stderr().find(LISTEN_LOST)

    # A fast shutdown writes out the WAL, so every completion committed before it (even with
    # synchronous_commit = off, as the worker's hot path commits) survived the restart.
    after_restart = completed_ids(store)
    assert before_outage <= after_restart, (
        f"completions lost with the server: {sorted(before_outage - after_restart)[:20]}"
    )
    assert len(after_restart) < jobs, "nothing left to do after the outage"

    def drained() -> bool:
        assert worker.is_running(), f"the worker exited after the outage:\n{worker.describe()}"
        return len(completed_ids(store)) == jobs

    wait_until(
        drained,
        90,
        interval=0.2,
        message=lambda: f"all {jobs} jobs completed: {describe_unfinished(store, worker, jobs)}",
    )
    # The listener retries with backoff (up to 10 s between tries), so it may come back some
    # seconds after the server; meanwhile the worker polls.
    wait_until(lambda: LISTEN_BACK in worker.stderr(), 40, message="the LISTEN reconnect")
    assert lost_at < worker.stderr().find(LISTEN_BACK)
    assert worker.is_running()

    # It carried on: jobs were completed after the connection was lost.
    assert re.search(r"job \d+ diag\.sleep completed", worker.stderr()[lost_at:])

    stored = all_jobs(store, jobs)
    assert sorted(job.id for job in stored) == sorted(ids)
    assert Counter(job.status for job in stored) == {JobStatus.COMPLETED: jobs}
    assert all(job.result == {"slept_seconds": 0.01} for job in stored)
    # Every handler ran once, at attempt 1. The stop may cut a transaction off after the server
    # committed it but before the worker read the answer (seen in full-suite runs; ADR 0030):
    # its completions are found landed when the worker settles them again, and its claims,
    # which the worker never saw, are released (attempt not spent) and claimed again. Any other
    # event would mean an outcome refused or a job reclaimed.
    assert set(event_counts(store)) <= {"released"}, event_counts(store)
    assert len(event_job_ids(store, "released")) <= CONCURRENCY
    assert Counter(job.attempts for job in stored) == {1: jobs}
    started = Counter(job_id for job_id, _, _ in worker.job_lines("started"))
    assert [job_id for job_id, count in started.items() if count > 1] == []
    # The log agrees: no job completed twice.
    completed_lines = Counter(job_id for job_id, _, _ in worker.job_lines("completed"))
    assert [job_id for job_id, count in completed_lines.items() if count > 1] == []

    assert worker.stop(30) == 0


def test_after_a_postgres_crash_every_job_still_completes(
    throwaway_postgres: ThrowawayPostgres,
    dominus_procs: DominusProcesses,
    store: SqlJobStore,
    e2e_queue: JobQueue,
) -> None:
    """ADR 0005: a crash of the server may lose the last fraction of a second of (asynchronously
    committed) claims and completions, "which never loses a job: a lost completion leaves the
    job running until liveness reruns it; a lost claim leaves it pending".

    Failing when written: a completion lost with the server leaves its job `running`, locked by
    the worker that ran it, and that worker (still alive) keeps it fresh: its heartbeat refreshes
    every running row locked by its id (`claiming.heartbeat`), not just the claims it holds, so
    liveness never reruns the job."""
    jobs = 5000
    max_age_ms = 8000
    # What the crash loses is the WAL still in the server's buffers: the commits on the WAL page
    # being filled (what was written out survives in the OS's cache). Keep that page in the
    # buffers as long as possible, so that the crash loses the last commits of a busy drain
    # every time: the WAL writer writes asynchronous commits out only every 10 s, and the
    # worker's synchronous commits (which write them out too) are rare: no-op jobs save no
    # progress, and heartbeats come every 2 s. The drain runs for seconds, so it is busy when
    # the server goes down.
    with psycopg.connect(throwaway_postgres.conninfo("postgres"), autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET wal_writer_delay = '10s'")
        admin.execute("ALTER SYSTEM SET wal_writer_flush_after = '64MB'")
        admin.execute("SELECT pg_reload_conf()")
    worker, ids = start_draining(
        dominus_procs,
        store,
        e2e_queue,
        jobs=jobs,
        request=EnqueueRequest("diag.noop"),
        env={"JOB_MAX_RUNNING_AGE_MS": str(max_age_ms), "JOB_HEARTBEAT_INTERVAL_MS": "2000"},
    )

    # Immediate mode: the server stops without a shutdown checkpoint, as if it had crashed;
    # recovery replays only the WAL that reached the disk.
    take_down(throwaway_postgres, store, worker, "immediate", 3.0)
    assert LISTEN_LOST in worker.stderr()

    # At-least-once: every job ends completed. A job whose completion was lost must be rerun
    # once it has been running for longer than JOB_MAX_RUNNING_AGE_MS without a heartbeat.
    def drained() -> bool:
        assert worker.is_running(), f"the worker exited after the crash:\n{worker.describe()}"
        return len(completed_ids(store)) == jobs

    wait_until(
        drained,
        max_age_ms / 1000 + 35,
        interval=0.2,
        message=lambda: (
            f"all {jobs} jobs completed after the crash (JOB_MAX_RUNNING_AGE_MS={max_age_ms}): "
            + describe_unfinished(store, worker, jobs)
        ),
    )
    stored = all_jobs(store, jobs)
    assert sorted(job.id for job in stored) == sorted(ids)
    assert Counter(job.status for job in stored) == {JobStatus.COMPLETED: jobs}
    # Reruns are allowed (a lost claim or completion costs an extra run), failures are not. A
    # row the worker holds no longer (its completion lost with the server, or a claim it never
    # saw commit) is released at its next successful tick (ADR 0030), or else reclaimed.
    assert set(event_counts(store)) <= {"lost", "reclaimed", "released", "retry_scheduled"}
    assert max(job.attempts for job in stored) <= 2
    assert all(job.result == {} for job in stored)
    assert worker.is_running()
    assert worker.stop(30) == 0
