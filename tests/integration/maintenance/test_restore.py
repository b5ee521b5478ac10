"""Restore on both backends: the round trip (a backup taken, more jobs enqueued, the backup
restored: the later jobs are gone, the database as it was is kept), gzip'd SQLite backups, live
workers refused unless forced, a backup of the other backend refused; and vacuum."""

from __future__ import annotations

import sqlite3
import stat
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.errors import MaintenanceError
from dominus.jobs import JobQueue, SqlJobStore, Worker, WorkerConfig, WorkerInfo
from dominus.jobs.abort import AbortSignal
from dominus.jobs.client import EnqueueRequest
from dominus.jobs.clock import utc_now
from dominus.maintenance.backup import BackupOptions, make_backup
from dominus.maintenance.files import list_backups
from dominus.maintenance.restore import restore_backup
from dominus.maintenance.vacuum import vacuum

pytestmark = pytest.mark.backends("sqlite", "postgresql")


LIVE = timedelta(minutes=5)


def job_ids(store: SqlJobStore) -> list[int]:
    return sorted(job.id for job in store.list_jobs(limit=1000))


def enqueue(queue: JobQueue, count: int) -> None:
    queue.enqueue_jobs([EnqueueRequest("diag.noop")] * count)


def restore(engine: Engine, backup_dir: Path, name: str, *, force: bool = False):  # type: ignore[no-untyped-def]
    return restore_backup(
        engine, backup_dir, name, utc_now(), live_after=LIVE, force=force, abort=AbortSignal()
    )


@pytest.mark.parametrize("compress", ["off", "gzip"])
def test_a_restore_brings_back_the_backed_up_rows(
    engine: Engine, store: SqlJobStore, queue: JobQueue, backup_dir: Path, compress: str
) -> None:
    enqueue(queue, 3)
    before = job_ids(store)
    options = BackupOptions(backup_dir, 30, compress=compress)  # type: ignore[arg-type]
    taken = make_backup(engine, options, utc_now(), AbortSignal())
    enqueue(queue, 2)
    assert len(job_ids(store)) == 5
    result = restore(engine, backup_dir, taken.path.name)
    assert job_ids(SqlJobStore(engine)) == before
    assert result.revision == result.head and not result.needs_upgrade
    assert result.pre_restore is not None
    if engine.dialect.name == "sqlite":
        assert result.pre_restore.name == "dominus.db.pre-restore"
        assert stat.S_IMODE(result.pre_restore.stat().st_mode) == 0o600
        with sqlite3.connect(result.pre_restore) as kept:
            assert kept.execute("SELECT count(*) FROM job_queue").fetchone() == (5,)
    else:
        # The database as it was is a dump beside the others; restoring it brings all 5 back.
        assert result.pre_restore.parent == backup_dir
        restore(engine, backup_dir, result.pre_restore.name)
        assert len(job_ids(SqlJobStore(engine))) == 5
    # New jobs get new ids after a restore (no collision with the restored rows).
    enqueue(queue, 1)
    assert len(job_ids(SqlJobStore(engine))) == len(set(job_ids(SqlJobStore(engine))))


def test_a_restore_is_refused_while_a_worker_is_alive(
    engine: Engine, store: SqlJobStore, queue: JobQueue, backup_dir: Path
) -> None:
    enqueue(queue, 1)
    taken = make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), AbortSignal())
    now = utc_now()
    store.register_worker(WorkerInfo("host:42:live", "host", 42, 2, ["diag.noop"], now, now))
    enqueue(queue, 1)
    with pytest.raises(MaintenanceError, match=r"1 worker\(s\) alive \(host:42:live\)"):
        restore(engine, backup_dir, taken.path.name)
    assert len(job_ids(store)) == 2  # nothing changed
    assert [backup.name for backup in list_backups(backup_dir)] == [taken.path.name]
    restore(engine, backup_dir, taken.path.name, force=True)
    assert len(job_ids(SqlJobStore(engine))) == 1


def test_a_backup_of_the_other_backend_is_refused(engine: Engine, backup_dir: Path) -> None:
    backup_dir.mkdir()
    other = (
        "dominus-20300101T000000Z.dump"
        if engine.dialect.name == "sqlite"
        else ("dominus-20300101T000000Z.db")
    )
    (backup_dir / other).write_bytes(b"")
    with pytest.raises(MaintenanceError, match="backup; DATABASE_URL is a"):
        restore(engine, backup_dir, other)


def test_vacuum_checks_and_compacts(engine: Engine, queue: JobQueue) -> None:
    enqueue(queue, 50)
    result = vacuum(engine, AbortSignal())
    assert result.backend == engine.dialect.name
    assert result.integrity == ("ok" if engine.dialect.name == "sqlite" else "not checked")
    assert result.size_before > 0 and result.size_after > 0


def test_a_live_worker_is_back_in_workers_after_a_forced_restore(
    engine: Engine, store: SqlJobStore, queue: JobQueue, backup_dir: Path
) -> None:
    """The backup has no row for the worker running now: after a forced restore it must not
    stay invisible (to `workers`, and to the next restore's live-worker check)."""
    taken = make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), AbortSignal())
    worker = Worker(
        store, queue.registry, WorkerConfig(heartbeat_interval_seconds=1, poll_interval_seconds=1)
    )
    started = utc_now()
    worker.run_once(started)
    assert [info.id for info in store.list_workers()] == [worker.id]

    restore(engine, backup_dir, taken.path.name, force=True)
    assert SqlJobStore(engine).list_workers() == []
    worker.run_once(started + timedelta(seconds=2))  # its next heartbeat

    assert [info.id for info in SqlJobStore(engine).list_workers()] == [worker.id]
    with pytest.raises(MaintenanceError, match=r"1 worker\(s\) alive"):
        restore(engine, backup_dir, taken.path.name)
