"""Noticing new work (and cancel requests) sooner than the poll interval.

Polling every JOB_QUEUE_POLL_INTERVAL_MS is the floor, never the latency. On SQLite a worker
watches `PRAGMA data_version` on a connection of its own: the number changes whenever another
connection (another process, or another connection of this one) commits. Reading it costs a
few microseconds and touches no table, so the worker checks it every few milliseconds while it
has free slots (a pulled watcher: `needs_polling`). On PostgreSQL the database pushes:
LISTEN/NOTIFY, in `dominus.jobs.notifications`; a notification says when its jobs fall due, so
a worker whose clock runs a little behind the enqueuer's claims them then (ADR 0062). An enqueue
in the same process wakes the worker directly (`JobQueue.subscribe(worker.wake)`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

log = logging.getLogger(__name__)

# Called when new work may exist, with the earliest `run_at` of the jobs that became pending
# when the watcher knows it (None: look now).
JobsCallback = Callable[[datetime | None], None]


class ChangeWatcher(Protocol):
    # True: the worker calls `changed()` every few milliseconds while it has free slots.
    # False: the watcher calls the callbacks given to `start` itself.
    needs_polling: bool

    def start(
        self,
        on_jobs: JobsCallback,
        on_cancel: Callable[[], None],
        worker_id: str | None = None,
    ) -> None:
        """Begin watching; `on_jobs` when new work may exist, `on_cancel` when a cancel request
        may concern this worker."""
        ...

    def changed(self) -> bool:
        """For polled watchers: True if the database may have new work since the last call."""
        ...

    def close(self) -> None: ...


class NoChangeWatcher:
    """The worker relies on polling alone."""

    needs_polling = False

    def start(
        self,
        on_jobs: JobsCallback,
        on_cancel: Callable[[], None],
        worker_id: str | None = None,
    ) -> None:
        return None

    def changed(self) -> bool:
        return False

    def close(self) -> None:
        return None


class SqliteDataVersionWatcher(NoChangeWatcher):
    """Watches `PRAGMA data_version` of a SQLite database file."""

    needs_polling = True

    def __init__(self, path: Path) -> None:
        super().__init__()
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
