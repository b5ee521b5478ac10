"""What a backup must be before a restore replaces the database with it.

A restore first proves that the file is a sound DOMINUS database this code can upgrade, and
replaces nothing otherwise (MaintenanceError, one line: exit 2):

- it verifies: a `.db.gz` unpacks (not truncated, its checksum right), a SQLite file opens and
  passes `PRAGMA integrity_check`, a dump's table of contents can be read;
- it is DOMINUS's: it has Alembic's `alembic_version` table and the tables of record (the job
  engine's, which every revision of the schema has);
- its revision is one of this code's migrations (the head or an ancestor), so `dominus db
  upgrade` can bring it to the head. A revision this code does not know is a newer DOMINUS's
  (or not DOMINUS's at all): its schema cannot be read, nor migrated down, by this version.
"""

from __future__ import annotations

import gzip
import sqlite3
import zlib
from pathlib import Path

from dominus.errors import BackupFailedError, MaintenanceError
from dominus.jobs.abort import AbortSignal
from dominus.maintenance import pg_tools
from dominus.maintenance.backup import gunzip
from dominus.maintenance.sqlite_copy import interruptible, open_sqlite
from dominus.schema import migrate

# The job engine's tables (the first migration's): present at every revision of the schema.
TABLES_OF_RECORD = ("job_queue", "job_events", "dead_letter_jobs", "workers")
VERSION_TABLE = "alembic_version"
MAX_REPORTED_PROBLEMS = 3


def does_not_verify(backup: Path, reason: str) -> MaintenanceError:
    return MaintenanceError(f"backup {backup.name} does not verify: {reason}; nothing was restored")


def unpack(backup: Path, target: Path, abort: AbortSignal) -> None:
    """Decompress a `.db.gz` backup into `target`. A damaged file (not gzip, truncated, its
    data or checksum corrupt) does not verify; a file that cannot be written fails."""
    try:
        gunzip(backup, target, abort)
    except EOFError:
        raise does_not_verify(backup, "its gzip data ends before the end of the stream") from None
    except (gzip.BadGzipFile, zlib.error) as error:
        raise does_not_verify(backup, f"bad gzip data ({error})") from None
    except OSError as error:  # writing the unpacked copy: the disk, not the backup
        raise BackupFailedError(
            f"backup {backup.name} could not be unpacked: {error}; nothing was restored"
        ) from None


def check_sqlite_backup(backup: Path, database: Path, abort: AbortSignal) -> str:
    """Check the SQLite database `database` (the backup itself, or what it unpacked to), read
    only. Returns its schema revision; MaintenanceError when it must not be restored."""
    try:
        connection = open_sqlite(database, read_only=True)
        with interruptible(connection, abort):
            problems = [str(row[0]) for row in connection.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                shown = "; ".join(problems[:MAX_REPORTED_PROBLEMS])
                raise does_not_verify(backup, f"its integrity check found: {shown}")
            tables = {
                str(row[0])
                for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            revisions = None
            if VERSION_TABLE in tables:
                query = "SELECT version_num FROM alembic_version"
                revisions = [str(row[0]) for row in connection.execute(query)]
    except sqlite3.Error as error:
        raise does_not_verify(backup, f"SQLite: {error}") from None
    return check_schema(backup, revisions, tables)


def check_dump(backup: Path, abort: AbortSignal, server_major: int) -> str:
    """Check a PostgreSQL dump (custom format) without restoring it. Returns its schema
    revision; MaintenanceError when it must not be restored."""
    try:
        pg_tools.verify_dump(backup, abort, server_major)
        tables, revisions = pg_tools.dump_schema(backup, abort, server_major)
    except BackupFailedError as error:
        raise does_not_verify(backup, error.message) from None
    return check_schema(backup, revisions, tables)


def check_schema(backup: Path, revisions: list[str] | None, tables: set[str]) -> str:
    """The backup's revision, when its schema is DOMINUS's at a revision this code knows.
    `revisions`: the rows of its alembic_version table, None when it has none."""
    if revisions is None:
        raise _refused(backup, "is not a DOMINUS database (no alembic_version table)")
    missing = [table for table in TABLES_OF_RECORD if table not in tables]
    if missing:
        raise _refused(backup, f"is not a DOMINUS database (no table {', '.join(missing)})")
    if len(revisions) != 1:
        found = ", ".join(revisions) if revisions else "none"
        raise _refused(
            backup, f"is not a DOMINUS database (one schema revision expected, found: {found})"
        )
    [revision] = revisions
    if revision not in migrate.known_revisions():
        raise _refused(
            backup, f"is from a newer DOMINUS (revision {revision} unknown to this version)"
        )
    return revision


def _refused(backup: Path, why: str) -> MaintenanceError:
    return MaintenanceError(f"backup {backup.name} {why}; nothing was restored")
