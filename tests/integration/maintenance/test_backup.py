"""BACKUP: an online copy while a worker keeps writing, verified; gzip; the retention (0 keeps
everything, keep-last); a copy that fails verification leaves nothing; an unusable BACKUP_DIR
fails the job at once; a PostgreSQL dump with the local server, and a missing or too old
pg_dump refused before anything is written."""

from __future__ import annotations

import gzip
import sqlite3
import stat
import subprocess
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.config import Settings
from dominus.errors import BackupFailedError, JobAbortedError, MaintenanceError
from dominus.jobs import JobQueue, JobStatus, SqlJobStore
from dominus.jobs.abort import AbortReason, AbortSignal
from dominus.jobs.client import EnqueueRequest
from dominus.jobs.clock import utc_now
from dominus.maintenance import backup as backup_module
from dominus.maintenance.backup import BackupOptions, make_backup
from dominus.maintenance.files import backup_name, list_backups
from tests.support.polling import wait_until
from tests.support.running_worker import RunningWorker


def enqueue_noops(queue: JobQueue, count: int) -> None:
    queue.enqueue_jobs([EnqueueRequest("diag.noop")] * count)


def unfinished(store: SqlJobStore) -> int:
    by_status = store.queue_stats(utc_now(), alive_since=utc_now()).by_status
    return by_status.get("pending", 0) + by_status.get("running", 0)


def completed(store: SqlJobStore) -> int:
    return store.queue_stats(utc_now(), alive_since=utc_now()).by_status.get("completed", 0)


def open_copy(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def integrity(path: Path) -> list[str]:
    with open_copy(path) as connection:
        return [row[0] for row in connection.execute("PRAGMA integrity_check")]


def job_count(path: Path) -> int:
    with open_copy(path) as connection:
        return int(connection.execute("SELECT count(*) FROM job_queue").fetchone()[0])


def test_a_backup_job_copies_the_database_while_the_worker_drains_jobs(
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    backup_dir: Path,
) -> None:
    enqueue_noops(live_queue, 500)
    running = start_worker()
    backup_ids = []
    for _ in range(2):
        backup_ids.append(live_queue.enqueue_job("BACKUP").job_id)
        enqueue_noops(live_queue, 500)
    wait_until(lambda: unfinished(store) == 0, 60, "the queue to drain")
    running.stop()

    for job_id in backup_ids:
        job = store.get_job(job_id)
        assert job.status is JobStatus.COMPLETED, job.last_error
        result = job.result
        assert result is not None
        path = Path(result["path"])
        assert path.parent == backup_dir and path.name.endswith(".db")
        assert result["verified"] is True
        assert result["size_bytes"] == path.stat().st_size > 0
        assert result["duration_seconds"] >= 0
        assert result["pruned_files"] == []
        assert integrity(path) == ["ok"]
        # The copy is one moment of the database: every job enqueued before the backup was, at
        # least, and the BACKUP job itself (running then).
        assert 500 <= job_count(path) == result["job_rows"] <= 1502
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(backup_dir.stat().st_mode) == 0o700
    assert [entry.name for entry in backup_dir.iterdir() if entry.name.startswith(".")] == []


def test_a_backup_taken_beside_a_busy_worker_is_consistent(
    engine: Engine,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    backup_dir: Path,
) -> None:
    enqueue_noops(live_queue, 3000)
    running = start_worker(concurrency=4)
    wait_until(lambda: completed(store) > 0, 30)
    options = BackupOptions(backup_dir, retention_days=30)
    results = [make_backup(engine, options, utc_now(), AbortSignal()) for _ in range(2)]
    running.stop()
    for result in results:
        assert integrity(result.path) == ["ok"]
        assert job_count(result.path) == result.job_rows == 3000
        with open_copy(result.path) as copy:
            [(journal,)] = copy.execute("PRAGMA journal_mode").fetchall()
            assert journal == "delete"  # a standalone file: no -wal beside it is needed
    assert len({result.path for result in results}) == 2


def test_a_gzipped_backup_decompresses_to_a_verified_copy(
    engine: Engine, queue: JobQueue, backup_dir: Path, tmp_path: Path
) -> None:
    enqueue_noops(queue, 20)
    options = BackupOptions(backup_dir, retention_days=30, compress="gzip")
    result = make_backup(engine, options, utc_now(), AbortSignal())
    assert result.compressed and result.path.name.endswith(".db.gz")
    assert stat.S_IMODE(result.path.stat().st_mode) == 0o600
    plain = tmp_path / "plain.db"
    plain.write_bytes(gzip.decompress(result.path.read_bytes()))
    assert integrity(plain) == ["ok"]
    assert job_count(plain) == result.job_rows == 20
    assert sorted(entry.name for entry in backup_dir.iterdir()) == [result.path.name]


def test_a_copy_that_fails_verification_fails_and_leaves_nothing(
    engine: Engine, backup_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def damaged_copy(_database: Path, target: Path, _abort: AbortSignal) -> None:
        target.write_bytes(b"this is not a database" * 300)

    monkeypatch.setattr(backup_module, "copy_online", damaged_copy)
    with pytest.raises(BackupFailedError, match="could not be verified"):
        make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), AbortSignal())
    assert list(backup_dir.iterdir()) == []


def test_an_aborted_backup_leaves_nothing(engine: Engine, backup_dir: Path) -> None:
    abort = AbortSignal()
    abort.set(AbortReason.CANCELLED)
    with pytest.raises(JobAbortedError):
        make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), abort)
    assert list(backup_dir.iterdir()) == []


def test_a_failed_verification_fails_the_job(
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    backup_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def truncated_copy(_database: Path, target: Path, _abort: AbortSignal) -> None:
        target.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)

    monkeypatch.setattr(backup_module, "copy_online", truncated_copy)
    job_id = live_queue.enqueue_job("BACKUP").job_id
    start_worker()
    job = wait_until(lambda: (job := store.get_job(job_id)).status.is_terminal and job, 30)
    assert job.status is JobStatus.FAILED
    assert job.attempts == 2  # retried once: a copy may fail for a passing reason
    assert "the copy" in (job.last_error or "")
    assert list(backup_dir.iterdir()) == []


def test_a_backup_dir_that_is_a_file_fails_the_job_at_once(
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
    backup_dir: Path,
) -> None:
    backup_dir.write_text("a file")
    job_id = live_queue.enqueue_job("BACKUP").job_id
    start_worker()
    job = wait_until(lambda: (job := store.get_job(job_id)).status.is_terminal and job, 30)
    assert job.status is JobStatus.FAILED
    assert job.attempts == 1
    assert f"BACKUP_DIR={backup_dir} is a file, not a directory" in (job.last_error or "")


class TestRetention:
    def seed(self, directory: Path, *ages_in_days: int) -> list[str]:
        directory.mkdir(mode=0o700, exist_ok=True)
        names = [backup_name(utc_now() - timedelta(days=age), ".db") for age in ages_in_days]
        for name in names:
            (directory / name).write_bytes(b"old")
        (directory / "dominus-notes.txt").write_text("not a backup: never touched")
        return names

    def test_old_backups_are_deleted_after_each_backup(
        self, engine: Engine, backup_dir: Path
    ) -> None:
        recent, old, older = self.seed(backup_dir, 3, 31, 90)
        result = make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), AbortSignal())
        assert sorted(result.pruned_files) == sorted([old, older])
        left = sorted(entry.name for entry in backup_dir.iterdir())
        assert left == sorted([recent, result.path.name, "dominus-notes.txt"])

    def test_zero_days_keeps_everything(self, engine: Engine, backup_dir: Path) -> None:
        seeded = self.seed(backup_dir, 3, 31, 900, 9000)
        result = make_backup(engine, BackupOptions(backup_dir, 0), utc_now(), AbortSignal())
        assert result.pruned_files == []
        assert [backup.name for backup in list_backups(backup_dir)] == [
            *sorted(seeded),
            result.path.name,
        ]

    def test_keep_last_keeps_the_newest(self, engine: Engine, backup_dir: Path) -> None:
        newest_old, old, older = self.seed(backup_dir, 40, 50, 60)
        options = BackupOptions(backup_dir, 30, keep_last=2)
        result = make_backup(engine, options, utc_now(), AbortSignal())
        assert sorted(result.pruned_files) == sorted([old, older])
        assert [backup.name for backup in list_backups(backup_dir)] == [
            newest_old,
            result.path.name,
        ]

    def test_the_payload_overrides_the_settings(
        self,
        store: SqlJobStore,
        live_queue: JobQueue,
        start_worker: Callable[..., RunningWorker],
        backup_dir: Path,
        settings: Settings,
    ) -> None:
        assert settings.BACKUP_RETENTION_DAYS == 30
        seeded = self.seed(backup_dir, 3, 31, 90)
        job_id = live_queue.enqueue_job("BACKUP", {"retention_days": 0}).job_id
        start_worker()
        job = wait_until(lambda: (job := store.get_job(job_id)).status.is_terminal and job, 30)
        assert job.status is JobStatus.COMPLETED, job.last_error
        assert job.result is not None and job.result["pruned_files"] == []
        assert len(list_backups(backup_dir)) == len(seeded) + 1


@pytest.mark.backends("postgresql")
def test_a_postgresql_backup_is_a_verified_custom_format_dump(
    engine: Engine, queue: JobQueue, backup_dir: Path
) -> None:
    enqueue_noops(queue, 10)
    result = make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), AbortSignal())
    assert result.backend == "postgresql" and result.verified
    assert result.path.name.endswith(".dump") and result.path.parent == backup_dir
    assert stat.S_IMODE(result.path.stat().st_mode) == 0o600
    assert result.path.read_bytes()[:5] == b"PGDMP"  # the custom format's magic
    listing = subprocess.run(
        ["pg_restore", "--list", str(result.path)], capture_output=True, text=True, check=True
    ).stdout
    assert "TABLE DATA public job_queue" in listing
    assert [backup.name for backup in list_backups(backup_dir)] == [result.path.name]


@pytest.mark.backends("postgresql")
def test_a_missing_pg_dump_is_refused_before_anything_is_written(
    engine: Engine, backup_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(MaintenanceError, match="pg_dump is not installed") as raised:
        make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), AbortSignal())
    assert not isinstance(raised.value, BackupFailedError)
    assert list(backup_dir.iterdir()) == []


@pytest.mark.backends("postgresql")
def test_a_pg_dump_older_than_the_server_is_refused(
    engine: Engine, backup_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    fake = tools / "pg_dump"
    fake.write_text("#!/bin/sh\necho 'pg_dump (PostgreSQL) 9.6.24'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    with pytest.raises(MaintenanceError, match=r"pg_dump 9 .* is older than the server"):
        make_backup(engine, BackupOptions(backup_dir, 30), utc_now(), AbortSignal())
    assert list(backup_dir.iterdir()) == []
