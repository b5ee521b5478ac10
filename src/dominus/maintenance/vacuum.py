"""`dominus maintenance vacuum`: SQLite: `PRAGMA integrity_check`, then VACUUM (the file is
rewritten without its free pages; writers wait meanwhile, so run it at a quiet time) and a WAL
checkpoint. PostgreSQL: `VACUUM ANALYZE` of the database (no exclusive lock; statistics
refreshed)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text

from dominus.db.engine import sqlite_path
from dominus.db.errors import database_errors
from dominus.errors import BackupFailedError
from dominus.jobs.abort import AbortSignal
from dominus.maintenance.sqlite_copy import (
    MAX_REPORTED_PROBLEMS,
    interruptible,
    open_sqlite,
)


@dataclass(frozen=True)
class VacuumResult:
    backend: str
    integrity: str  # "ok", or "not checked" (PostgreSQL has no such check)
    size_before: int
    size_after: int

    def document(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "integrity": self.integrity,
            "size_before_bytes": self.size_before,
            "size_after_bytes": self.size_after,
        }


def vacuum(engine: Engine, abort: AbortSignal) -> VacuumResult:
    database = sqlite_path(engine)
    if database is not None:
        return _vacuum_sqlite(database, abort)
    return _vacuum_postgres(engine)


def _vacuum_sqlite(database: Path, abort: AbortSignal) -> VacuumResult:
    before = _file_size(database)
    connection = open_sqlite(database, read_only=False)
    with interruptible(connection, abort):
        problems = [str(row[0]) for row in connection.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            shown = "; ".join(problems[:MAX_REPORTED_PROBLEMS])
            raise BackupFailedError(
                f"the database failed its integrity check ({shown}); VACUUM was not run: "
                "restore a backup (`dominus maintenance restore`)"
            )
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return VacuumResult("sqlite", "ok", before, _file_size(database))


def _file_size(database: Path) -> int:
    """The database's bytes on disk, its write-ahead log included."""
    wal = database.with_name(database.name + "-wal")
    return database.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _vacuum_postgres(engine: Engine) -> VacuumResult:
    size = text("SELECT pg_database_size(current_database())")
    with (
        database_errors(),
        engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection,
    ):
        before = int(connection.execute(size).scalar_one())
        connection.execute(text("VACUUM ANALYZE"))
        after = int(connection.execute(size).scalar_one())
    return VacuumResult("postgresql", "not checked", before, after)
