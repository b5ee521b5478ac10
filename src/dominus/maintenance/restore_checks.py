"""What a backup must be before a restore replaces the database with it.

A restore first proves that the file verifies, and replaces nothing otherwise (MaintenanceError,
one line: exit 2): a `.db.gz` unpacks (not truncated, its checksum right), a SQLite file opens
and passes `PRAGMA integrity_check`, a dump's table of contents can be read.
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


def check_sqlite_backup(backup: Path, database: Path, abort: AbortSignal) -> None:
    """Check the SQLite database `database` (the backup itself, or what it unpacked to), read
    only; MaintenanceError when it must not be restored."""
    try:
        connection = open_sqlite(database, read_only=True)
        with interruptible(connection, abort):
            problems = [str(row[0]) for row in connection.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                shown = "; ".join(problems[:MAX_REPORTED_PROBLEMS])
                raise does_not_verify(backup, f"its integrity check found: {shown}")
            connection.execute("SELECT count(*) FROM job_queue").fetchone()
    except sqlite3.Error as error:
        raise does_not_verify(backup, f"SQLite: {error}") from None


def check_dump(backup: Path, abort: AbortSignal, server_major: int) -> None:
    """Check a PostgreSQL dump (custom format) without restoring it; MaintenanceError when it
    must not be restored."""
    try:
        pg_tools.verify_dump(backup, abort, server_major)
    except BackupFailedError as error:
        raise does_not_verify(backup, error.message) from None
