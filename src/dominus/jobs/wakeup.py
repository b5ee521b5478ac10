"""Noticing new work sooner than the poll interval.

Polling every JOB_QUEUE_POLL_INTERVAL_MS is the floor, never the latency. On SQLite a worker
watches `PRAGMA data_version` on a connection of its own: the number changes whenever another
connection (another process, or another connection of this one) commits. Reading it costs a
few microseconds and touches no table, so the worker checks it every few milliseconds while it
has free slots. An enqueue in the same process wakes the worker directly
(`JobQueue.subscribe(worker.wake)`).
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)


class ChangeWatcher(Protocol):
    def changed(self) -> bool:
        """True if the database may have new work since the last call."""
        ...

    def close(self) -> None: ...


class NoChangeWatcher:
    """For backends without a cheap change signal yet: the worker relies on polling."""

    def changed(self) -> bool:
        return False

    def close(self) -> None:
        return None


class SqliteDataVersionWatcher:
    """Watches `PRAGMA data_version` of a SQLite database file."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None
        self._version: int | None = None

    def changed(self) -> bool:
        try:
            version = self._read()
        except sqlite3.Error as error:
            # The watcher is an optimisation: on failure, say so, reconnect next time, and let
            # the poll interval carry the load meanwhile.
            log.warning("data_version watch failed (%s); falling back to polling", error)
            self.close()
            return True
        previous, self._version = self._version, version
        return previous is not None and version != previous

    def _read(self) -> int:
        if self._connection is None:
            self._connection = sqlite3.connect(
                f"file:{self._path}?mode=ro", uri=True, check_same_thread=False
            )
        row = self._connection.execute("PRAGMA data_version").fetchone()
        return int(row[0])

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        self._version = None
