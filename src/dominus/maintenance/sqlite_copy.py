"""SQLite: an online, consistent copy of the database file, and its verification.

`VACUUM INTO` reads the database in one read transaction (a snapshot: in WAL mode workers keep
writing meanwhile, unblocked) and writes a compact, standalone copy in rollback-journal mode.
Unlike the step-wise backup API it never restarts when a writer commits during the copy, so a
busy worker cannot starve it. The copy counts only once `PRAGMA integrity_check` says `ok` and
the job table can be counted. Both are interruptible through the job's abort signal.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from dominus.errors import BackupFailedError
from dominus.jobs.abort import AbortReason, AbortSignal

BUSY_TIMEOUT_SECONDS = 30.0
MAX_REPORTED_PROBLEMS = 3


def open_sqlite(path: Path, *, read_only: bool) -> sqlite3.Connection:
    mode = "ro" if read_only else "rw"
    return sqlite3.connect(
        f"file:{quote(str(path))}?mode={mode}",
        uri=True,
        timeout=BUSY_TIMEOUT_SECONDS,
        isolation_level=None,
        check_same_thread=False,
    )


class _Interrupter:
    """Interrupts a connection's running statement when the abort signal is set, and never
    after the connection is done with (the signal may be set long after)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection: sqlite3.Connection | None = connection
        self._lock = threading.Lock()

    def __call__(self, _reason: AbortReason) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.interrupt()

    def release(self) -> None:
        with self._lock:
            self._connection = None


@contextmanager
def interruptible(connection: sqlite3.Connection, abort: AbortSignal) -> Iterator[None]:
    """Run statements on `connection` that `abort` interrupts; an interrupted statement leaves
    as JobAbortedError. Closes the connection at the end."""
    interrupter = _Interrupter(connection)
    abort.on_abort(interrupter)
    try:
        yield
    except sqlite3.OperationalError:
        abort.raise_if_set()  # "interrupted" because we asked for it
        raise
    finally:
        interrupter.release()
        connection.close()


def copy_online(database: Path, target: Path, abort: AbortSignal) -> None:
    """Copy the live database at `database` to `target` (an empty file, or none)."""
    abort.raise_if_set()
    try:
        connection = open_sqlite(database, read_only=False)  # "rw": never creates the -shm trouble
        with interruptible(connection, abort):
            connection.execute("VACUUM INTO ?", (str(target),))
    except sqlite3.Error as error:
        raise BackupFailedError(f"the SQLite copy failed: {error}") from error


def verify_copy(path: Path, abort: AbortSignal) -> int:
    """Check a copy (`PRAGMA integrity_check`) and count its jobs. Returns the count;
    BackupFailedError saying what is wrong otherwise."""
    try:
        connection = open_sqlite(path, read_only=True)
        with interruptible(connection, abort):
            problems = [row[0] for row in connection.execute("PRAGMA integrity_check")]
            if problems != ["ok"]:
                shown = "; ".join(str(problem) for problem in problems[:MAX_REPORTED_PROBLEMS])
                raise BackupFailedError(f"the copy failed its integrity check: {shown}")
            count = connection.execute("SELECT count(*) FROM job_queue").fetchone()[0]
    except sqlite3.Error as error:
        raise BackupFailedError(f"the copy could not be verified: {error}") from error
    return int(count)
