"""Restore refuses, before replacing anything, a backup that does not verify (a `.db.gz` that is
truncated, bit-flipped or not gzip at all; a `.db` that is not SQLite or has a corrupted page), a
database that is not DOMINUS's (no alembic_version table, a job_queue table alone) and one at a
schema revision this code does not know (a newer DOMINUS's). The live database is untouched and
no copy of it is kept: nothing happened."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from dominus.errors import BackupFailedError, MaintenanceError
from dominus.jobs import JobQueue, SqlJobStore
from dominus.jobs.abort import AbortSignal
from dominus.jobs.client import EnqueueRequest
from dominus.jobs.clock import utc_now
from dominus.maintenance.backup import BackupOptions, make_backup
from dominus.maintenance.restore import restore_backup

pytestmark = pytest.mark.backends("sqlite", "postgresql")


NEWER_REVISION = "9999_from_the_future"


def restore(engine: Engine, backup_dir: Path, name: str) -> None:
    restore_backup(
        engine,
        backup_dir,
        name,
        utc_now(),
        live_after=timedelta(minutes=5),
        force=False,
        abort=AbortSignal(),
    )


def take_backup(engine: Engine, backup_dir: Path, compress: str = "off") -> Path:
    options = BackupOptions(backup_dir, 0, compress=compress)  # type: ignore[arg-type]
    return make_backup(engine, options, utc_now(), AbortSignal()).path


def live_state(engine: Engine, backup_dir: Path) -> tuple[object, ...]:
    """What a refused restore must leave as it was: the database (its file, byte for byte, on
    SQLite; its rows and revision on PostgreSQL) and the backup directory's files."""
    with engine.connect() as connection:
        revision = connection.execute(text("SELECT version_num FROM alembic_version")).all()
        jobs = connection.execute(text("SELECT id, status FROM job_queue ORDER BY id")).all()
    engine.dispose()  # on SQLite: the WAL checkpointed into the file, which is then read
    database = engine.url.database
    digest = None
    if engine.dialect.name == "sqlite" and database is not None:
        digest = hashlib.sha256(Path(database).read_bytes()).hexdigest()
    files = sorted(path.name for path in backup_dir.iterdir())
    return revision, jobs, digest, files


def assert_refused(
    engine: Engine, backup_dir: Path, name: str, *fragments: str, error: type = MaintenanceError
) -> str:
    before = live_state(engine, backup_dir)
    with pytest.raises(MaintenanceError) as raised:
        restore(engine, backup_dir, name)
    assert type(raised.value) is error
    message = raised.value.message
    assert "\n" not in message
    assert message.startswith(f"backup {name} ") and message.endswith("; nothing was restored")
    for fragment in fragments:
        assert fragment in message, message
    assert live_state(engine, backup_dir) == before
    database = engine.url.database
    if engine.dialect.name == "sqlite" and database is not None:
        assert not Path(database + ".pre-restore").exists()
    return message


def enqueue(queue: JobQueue, count: int) -> None:
    queue.enqueue_jobs([EnqueueRequest("diag.noop")] * count)


def damaged_copy(backup: Path, damage: Callable[[bytes], bytes]) -> str:
    """A damaged copy of `backup`, beside it under another backup's name; its name."""
    suffix = ".db.gz" if backup.name.endswith(".gz") else ".db"
    copy = backup.with_name(f"dominus-20991231T000000Z{suffix}")
    copy.write_bytes(damage(backup.read_bytes()))
    return copy.name


def truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def bit_flipped(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x10  # inside the deflate stream: bad data, or a bad checksum
    return bytes(flipped)


def garbage(_data: bytes) -> bytes:
    return b"these are not the bytes of a backup\n" * 100


def last_page_header_overwritten(data: bytes) -> bytes:
    page_size = int.from_bytes(data[16:18], "big")
    corrupted = bytearray(data)
    last_page = len(data) - page_size
    corrupted[last_page : last_page + 8] = b"\xff" * 8  # its b-tree page header
    return bytes(corrupted)


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (truncated, "its gzip data ends before the end of the stream"),
        (bit_flipped, "bad gzip data"),
        (garbage, "bad gzip data (Not a gzipped file"),
    ],
)
def test_a_damaged_gzip_backup_does_not_verify(
    engine: Engine,
    queue: JobQueue,
    backup_dir: Path,
    damage: Callable[[bytes], bytes],
    reason: str,
) -> None:
    enqueue(queue, 300)
    name = damaged_copy(take_backup(engine, backup_dir, "gzip"), damage)
    assert_refused(engine, backup_dir, name, "does not verify: ", reason)


@pytest.mark.backends("sqlite")
@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (garbage, "SQLite: file is not a database"),
        (last_page_header_overwritten, "SQLite: database disk image is malformed"),
    ],
)
def test_a_sqlite_backup_that_is_not_sound_does_not_verify(
    engine: Engine,
    queue: JobQueue,
    backup_dir: Path,
    damage: Callable[[bytes], bytes],
    reason: str,
) -> None:
    enqueue(queue, 300)
    name = damaged_copy(take_backup(engine, backup_dir), damage)
    assert_refused(engine, backup_dir, name, "does not verify: ", reason)


@pytest.mark.backends("postgresql")
@pytest.mark.postgres
@pytest.mark.parametrize("damage", [truncated, garbage])
def test_a_damaged_dump_does_not_verify(
    engine: Engine, queue: JobQueue, backup_dir: Path, damage: Callable[[bytes], bytes]
) -> None:
    enqueue(queue, 30)
    backup = take_backup(engine, backup_dir)
    damaged = backup.with_name("dominus-20991231T000000Z.dump")
    damaged.write_bytes(damage(backup.read_bytes()))
    assert_refused(engine, backup_dir, damaged.name, "does not verify: pg_restore failed")


@pytest.mark.backends("sqlite")
def test_a_sqlite_backup_failing_its_integrity_check_does_not_verify(
    engine: Engine, queue: JobQueue, backup_dir: Path
) -> None:
    enqueue(queue, 300)
    backup = take_backup(engine, backup_dir)
    # An index whose entries are not those of its table: every page readable, not consistent.
    connection = sqlite3.connect(backup, isolation_level=None)
    connection.execute("CREATE INDEX ix_checked ON job_queue (job_type)")
    connection.execute("PRAGMA writable_schema=ON")
    connection.execute(
        "UPDATE sqlite_master SET sql = 'CREATE INDEX ix_checked ON job_queue (status)' "
        "WHERE name = 'ix_checked'"
    )
    connection.close()
    assert_refused(engine, backup_dir, backup.name, "does not verify: its integrity check found")


@pytest.mark.backends("sqlite")
def test_a_sqlite_file_with_a_job_queue_table_alone_is_not_dominus(
    engine: Engine, backup_dir: Path
) -> None:
    backup_dir.mkdir()
    stranger = backup_dir / "dominus-20300101T000000Z.db"
    connection = sqlite3.connect(stranger, isolation_level=None)
    connection.execute("CREATE TABLE job_queue (id INTEGER PRIMARY KEY, payload TEXT)")
    connection.execute("INSERT INTO job_queue (payload) VALUES ('{}')")
    connection.close()
    assert_refused(
        engine, backup_dir, stranger.name, "is not a DOMINUS database (no alembic_version table)"
    )


def test_a_backup_without_alembic_version_is_not_dominus(
    engine: Engine, queue: JobQueue, backup_dir: Path
) -> None:
    enqueue(queue, 2)
    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE alembic_version RENAME TO alembic_version_gone"))
    backup = take_backup(engine, backup_dir)
    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE alembic_version_gone RENAME TO alembic_version"))
    assert_refused(
        engine, backup_dir, backup.name, "is not a DOMINUS database (no alembic_version table)"
    )


def test_a_backup_without_a_table_of_record_is_not_dominus(
    engine: Engine, queue: JobQueue, backup_dir: Path
) -> None:
    enqueue(queue, 2)
    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE workers RENAME TO workers_gone"))
    backup = take_backup(engine, backup_dir)
    with engine.begin() as connection:
        connection.execute(text("ALTER TABLE workers_gone RENAME TO workers"))
    assert_refused(engine, backup_dir, backup.name, "is not a DOMINUS database (no table workers)")


@pytest.mark.parametrize("compress", ["off", "gzip"])
def test_a_backup_from_a_newer_dominus_is_refused(
    engine: Engine, store: SqlJobStore, queue: JobQueue, backup_dir: Path, compress: str
) -> None:
    enqueue(queue, 2)
    with engine.begin() as connection:
        [current] = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        set_revision = text("UPDATE alembic_version SET version_num = :revision")
        connection.execute(set_revision, {"revision": NEWER_REVISION})
    backup = take_backup(engine, backup_dir, compress)
    with engine.begin() as connection:
        connection.execute(set_revision, {"revision": current})
    enqueue(queue, 1)
    assert_refused(
        engine,
        backup_dir,
        backup.name,
        f"is from a newer DOMINUS (revision {NEWER_REVISION} unknown to this version)",
    )
    assert len(store.list_jobs()) == 3


def test_a_backup_at_an_older_known_revision_is_restored(
    engine: Engine, queue: JobQueue, backup_dir: Path
) -> None:
    enqueue(queue, 2)
    with engine.begin() as connection:
        [current] = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        set_revision = text("UPDATE alembic_version SET version_num = :revision")
        connection.execute(set_revision, {"revision": "0009_backtest"})
    backup = take_backup(engine, backup_dir)
    with engine.begin() as connection:
        connection.execute(set_revision, {"revision": current})
    result = restore_backup(
        engine,
        backup_dir,
        backup.name,
        utc_now(),
        live_after=timedelta(minutes=5),
        force=False,
        abort=AbortSignal(),
    )
    assert (result.revision, result.needs_upgrade) == ("0009_backtest", True)


@pytest.mark.backends("sqlite")
def test_a_backup_that_cannot_be_unpacked_for_want_of_space_fails_in_one_line(
    engine: Engine, backup_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backup = take_backup(engine, backup_dir, "gzip")

    def no_space(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("dominus.maintenance.restore_checks.gunzip", no_space)
    assert_refused(
        engine,
        backup_dir,
        backup.name,
        "could not be unpacked: [Errno 28] No space left on device",
        error=BackupFailedError,
    )
