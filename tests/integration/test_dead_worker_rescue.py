"""When a reaper takes a worker with a free liveness lock for dead (`dominus.jobs.rescue`): only
after two looks at least the confirm time apart, never during database trouble or soon after it,
and the looks start over after a failed one. On real SQLite, with a lock file nobody holds."""

from __future__ import annotations

import socket
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import BaseModel

from dominus.errors import DatabaseError
from dominus.jobs import HandlerRegistry, JobStatus, SqlJobStore, Worker, WorkerConfig, WorkerInfo
from dominus.jobs.liveness import FLOCK, lock_directory, lock_file
from dominus.jobs.rescue import DeadWorkerRescue
from dominus.jobs.retry import RetryPolicy
from tests.support.clock import T0
from tests.support.jobs import new_job


class Numbered(BaseModel):
    """The payload `new_job` gives."""

    n: int


class Moments:
    """The monotonic clock the rescue reads, moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Trouble:
    """What the worker's reaper says of database trouble: seconds since it ended, or None."""

    def __init__(self) -> None:
        self.since: float | None = None

    def __call__(self, _now: datetime) -> float | None:
        return self.since


@pytest.fixture
def dead_job(store: SqlJobStore) -> int:
    """A job running under worker "dead", whose lock file exists and nobody holds."""
    store.enqueue([new_job()], T0)
    store.register_worker(
        WorkerInfo("dead", socket.gethostname(), 1, 1, ["diag.noop"], T0, T0, liveness_lock=FLOCK)
    )
    [job] = store.claim("dead", ["diag.noop"], 1, T0)
    database = store.engine.url.database
    assert database is not None
    directory = lock_directory(Path(database).resolve())
    directory.mkdir(exist_ok=True)
    lock_file(directory, "dead").touch()
    return job.id


def rescue(store: SqlJobStore, moments: Moments, trouble: Trouble) -> DeadWorkerRescue:
    return DeadWorkerRescue(
        store,
        "me",
        confirm_seconds=1.5,
        settle_seconds=5.0,
        retry_delay=lambda _type, _attempt: 0.0,
        troubled_since=trouble,
        monotonic=moments,
    )


def test_a_free_lock_counts_only_when_it_stays_free_for_the_confirm_time(
    store: SqlJobStore, dead_job: int
) -> None:
    moments, trouble = Moments(), Trouble()
    watch = rescue(store, moments, trouble)
    assert watch.maybe_rescue(T0) == []  # first look: a suspect
    moments.now += 1.0
    assert watch.maybe_rescue(T0) == []  # free for 1 s of 1.5
    moments.now += 0.5
    [rescued] = watch.maybe_rescue(T0)
    assert rescued.job_id == dead_job and rescued.from_worker == "dead"
    assert store.get_job(dead_job).status is JobStatus.PENDING


def test_looks_during_or_soon_after_database_trouble_count_for_nothing(
    store: SqlJobStore, dead_job: int
) -> None:
    moments, trouble = Moments(), Trouble()
    watch = rescue(store, moments, trouble)
    assert watch.maybe_rescue(T0) == []
    trouble.since = 0.0  # trouble now: the suspicion is dropped
    moments.now += 10
    assert watch.maybe_rescue(T0) == []
    trouble.since = 4.9  # ended, but within the settle time
    moments.now += 10
    assert watch.maybe_rescue(T0) == []
    trouble.since = 5.0
    assert watch.maybe_rescue(T0) == []  # the looks start over here
    moments.now += 1.5
    assert [job.job_id for job in watch.maybe_rescue(T0)] == [dead_job]


def test_a_failed_look_starts_the_looks_over(
    store: SqlJobStore, dead_job: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    moments, trouble = Moments(), Trouble()
    watch = rescue(store, moments, trouble)
    assert watch.maybe_rescue(T0) == []
    moments.now += 2

    def fails(_except_worker: str) -> set[str]:
        raise DatabaseError("the database is unreachable")

    monkeypatch.setattr(store, "workers_found_dead", fails)
    with pytest.raises(DatabaseError):
        watch.maybe_rescue(T0)
    monkeypatch.undo()
    assert watch.maybe_rescue(T0) == []  # a first look again
    moments.now += 1.5
    assert [job.job_id for job in watch.maybe_rescue(T0)] == [dead_job]


def test_a_worker_whose_lock_file_is_gone_is_not_taken_for_dead(
    store: SqlJobStore, dead_job: int
) -> None:
    moments, trouble = Moments(), Trouble()
    watch = rescue(store, moments, trouble)
    assert watch.maybe_rescue(T0) == []
    database = store.engine.url.database
    assert database is not None
    lock_file(lock_directory(Path(database).resolve()), "dead").unlink()
    moments.now += 2
    assert watch.maybe_rescue(T0) == []  # no file: nothing can be told, so not dead
    assert store.get_job(dead_job).status is JobStatus.RUNNING


def test_a_burst_worker_rescues_a_dead_workers_jobs_and_runs_them(
    store: SqlJobStore, dead_job: int
) -> None:
    """A burst worker started after a worker was killed does not leave the dead worker's jobs
    `running`: it waits for its looks at the liveness locks, rescues them and runs them."""
    config = WorkerConfig(
        burst=True,
        poll_interval_seconds=0.05,
        dead_worker_check_interval_seconds=0.05,
        dead_worker_confirm_seconds=0.2,
        retry_policy=RetryPolicy(base_seconds=0.0),
    )
    registry = HandlerRegistry()
    registry.register("diag.noop", lambda _payload, _context: None, Numbered)
    Worker(store, registry, config).run()
    assert store.get_job(dead_job).status is JobStatus.COMPLETED
