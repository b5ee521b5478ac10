"""`dominus maintenance restore FILE`: put a backup from BACKUP_DIR back as the database.

Refused (MaintenanceError, nothing changed) when FILE is not a backup inside BACKUP_DIR, is of
the other backend, or a worker is alive (its heartbeat younger than JOB_MAX_RUNNING_AGE_MS)
unless `force`; and when the backup does not verify, is not a DOMINUS database, or is at a
schema revision this code does not know (`restore_checks`). Those checks come before anything
is replaced, and the database as it was is kept first:

- SQLite: a consistent copy of the current file as `<database>.pre-restore` (replacing an
  older one), then the backup is copied into the live file through SQLite's backup API, which
  takes the write lock and respects the WAL, so a process that still has the file open (with
  `force`) sees the restored content instead of writing into an orphaned file.
- PostgreSQL: a regular backup (`dominus-<timestamp>.dump` in BACKUP_DIR, outside the
  retention's reach only by its age), then `pg_restore --clean --if-exists --single-transaction`:
  all of the dump's objects are replaced in one transaction, or nothing is (ADR 0020).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, inspect

from dominus.db.engine import sqlite_path
from dominus.db.errors import database_errors
from dominus.errors import BackupFailedError, MaintenanceError
from dominus.jobs.abort import AbortSignal
from dominus.jobs.sql import SqlJobStore
from dominus.maintenance import pg_tools
from dominus.maintenance.backup import BackupOptions, make_backup
from dominus.maintenance.files import (
    confined_backup,
    create_private_file,
    parse_backup_name,
    partial_path,
    remove_quietly,
)
from dominus.maintenance.restore_checks import check_dump, check_sqlite_backup, unpack
from dominus.maintenance.sqlite_copy import copy_online, open_sqlite
from dominus.schema import migrate

PRE_RESTORE_SUFFIX = ".pre-restore"


@dataclass(frozen=True)
class RestoreResult:
    restored: Path
    backend: str
    pre_restore: Path | None  # the database as it was, kept
    revision: str | None  # the restored database's schema revision
    head: str  # the revision this code expects
    duration_seconds: float

    @property
    def needs_upgrade(self) -> bool:
        return self.revision != self.head

    def document(self) -> dict[str, Any]:
        return {
            "restored": str(self.restored),
            "backend": self.backend,
            "pre_restore": str(self.pre_restore) if self.pre_restore else None,
            "revision": self.revision,
            "expected_revision": self.head,
            "needs_upgrade": self.needs_upgrade,
            "duration_seconds": round(self.duration_seconds, 3),
        }


def restore_backup(
    engine: Engine,
    directory: Path,
    file: str,
    now: datetime,
    *,
    live_after: timedelta,
    force: bool,
    abort: AbortSignal,
) -> RestoreResult:
    started = time.monotonic()
    path = confined_backup(directory, file)
    parsed = parse_backup_name(path.name)
    assert parsed is not None  # confined_backup refuses other names
    backend = engine.dialect.name
    if parsed[1] != backend:
        raise MaintenanceError(
            f"{path.name} is a {parsed[1]} backup; DATABASE_URL is a {backend} database"
        )
    if not force:
        refuse_live_workers(engine, now - live_after)
    # A known backend: it is the backup's kind, checked above.
    pre_restore = _RESTORERS[backend](engine, directory, path, now, abort)
    engine.dispose()  # pooled connections may hold the old schema's state
    return RestoreResult(
        restored=path,
        backend=backend,
        pre_restore=pre_restore,
        revision=migrate.current_revision(engine),
        head=migrate.head_revision(),
        duration_seconds=time.monotonic() - started,
    )


def refuse_live_workers(engine: Engine, alive_since: datetime) -> None:
    with database_errors():
        if not inspect(engine).has_table("workers"):
            return  # a database without the schema has no workers
    alive = SqlJobStore(engine).list_workers(alive_since=alive_since)
    if alive:
        names = ", ".join(worker.id for worker in alive[:3])
        raise MaintenanceError(
            f"{len(alive)} worker(s) alive ({names}): stop them first, or restore with --force "
            "(they would go on working on the restored database)"
        )


def _restore_sqlite(
    engine: Engine, _directory: Path, backup: Path, _now: datetime, abort: AbortSignal
) -> Path | None:
    database = sqlite_path(engine)
    assert database is not None  # the engine factory refuses in-memory SQLite
    if not backup.name.endswith(".gz"):
        check_sqlite_backup(backup, backup, abort)
        pre_restore = _keep_current(database, abort)
        _copy_into(backup, database)
        return pre_restore
    unpacked = partial_path(backup.with_name(backup.name.removesuffix(".gz")))
    remove_quietly(unpacked)
    try:
        unpack(backup, unpacked, abort)
        check_sqlite_backup(backup, unpacked, abort)
        pre_restore = _keep_current(database, abort)
        _copy_into(unpacked, database)
    finally:
        remove_quietly(unpacked)
    return pre_restore


def _keep_current(database: Path, abort: AbortSignal) -> Path | None:
    """A consistent copy of the database as it is now, as `<database>.pre-restore`."""
    if not database.exists():
        return None
    database = database.absolute()
    kept = database.with_name(database.name + PRE_RESTORE_SUFFIX)
    partial = partial_path(kept)
    remove_quietly(partial)
    create_private_file(partial).close()
    try:
        copy_online(database, partial, abort)
        os.replace(partial, kept)
    except BaseException:
        remove_quietly(partial)
        raise
    return kept


def _copy_into(source: Path, database: Path) -> None:
    """Copy `source` into the live database in one backup-API step: not interruptible, since a
    half-restored database is worse than a late abort."""
    try:
        reader = open_sqlite(source, read_only=True)
        try:
            writer = _open_target(database)
            try:
                reader.backup(writer)
                writer.execute("PRAGMA journal_mode=WAL")
            finally:
                writer.close()
        finally:
            reader.close()
    except sqlite3.Error as error:
        raise BackupFailedError(f"the restore could not write the database: {error}") from error


def _open_target(database: Path) -> sqlite3.Connection:
    if database.exists():
        return open_sqlite(database, read_only=False)
    create_private_file(database).close()
    return open_sqlite(database, read_only=False)


def _restore_postgres(
    engine: Engine, directory: Path, dump: Path, now: datetime, abort: AbortSignal
) -> Path:
    check_dump(dump, abort, pg_tools.server_major_version(engine))
    kept = make_backup(engine, BackupOptions(directory, retention_days=0), now, abort)
    pg_tools.restore(engine, dump, abort)
    return kept.path


# Each backend's restore of a backup file (verified, the current database kept, then replaced):
# where the database as it was is kept, None when there was no SQLite file yet.
Restorer = Callable[[Engine, Path, Path, datetime, AbortSignal], Path | None]
_RESTORERS: dict[str, Restorer] = {
    "sqlite": _restore_sqlite,
    "postgresql": _restore_postgres,
}
