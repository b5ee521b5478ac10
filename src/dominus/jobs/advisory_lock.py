"""The PostgreSQL liveness lock: a session advisory lock a worker holds on a connection of its
own (see `liveness.py`). Apart from `liveness.py` so that SQLite commands never import psycopg."""

from __future__ import annotations

import contextlib
import logging
import select
import threading
from typing import Any

import psycopg

from dominus.jobs.backoff import Backoff, FailureStreak
from dominus.jobs.liveness import ADVISORY, ADVISORY_NAMESPACE, advisory_key

log = logging.getLogger("dominus.worker")

# After a lost lock connection, the next tries: 0.1 s, 0.2 s, 0.4 s ... at most 2 s apart.
RETAKE_BACKOFF = Backoff(base_seconds=0.1, max_seconds=2.0)
# How long the watch thread blocks on the socket before it looks whether to stop.
WATCH_SLICE_SECONDS = 0.5


class AdvisoryLivenessLock:
    """A session advisory lock on a connection of its own, watched by a thread of its own.

    The thread waits on the connection's socket, so a connection ended under a live worker (a
    terminated backend, a server restart) is seen at once and the lock taken again within a
    fraction of a second: well inside the time other workers take to confirm a death
    (`rescue.py`). Until it is held again, `held` is False and the worker claims nothing."""

    kind = ADVISORY

    def __init__(self, conninfo: str, worker_id: str) -> None:
        self._conninfo = conninfo
        self._key = advisory_key(worker_id)
        self._lock = threading.Lock()
        self._connection: psycopg.Connection[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._retries = FailureStreak(RETAKE_BACKOFF)

    @property
    def held(self) -> bool:
        return self._connection is not None

    def acquire(self) -> bool:
        with self._lock:
            if self._connection is None and not self._take():
                return False
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._watch, name="dominus-liveness", daemon=True
            )
            self._thread.start()
        return True

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        with self._lock:
            self._drop()

    def _watch(self) -> None:
        while not self._stop.is_set():
            connection = self._connection
            if connection is None:
                with self._lock:
                    taken = self._stop.is_set() or self._take()
                if not taken:
                    self._stop.wait(self._retries.failed())
                continue
            try:
                # Readable only when the server says something unasked: the notice that ends
                # a terminated session, or the connection's close.
                readable, _, _ = select.select([connection.fileno()], [], [], WATCH_SLICE_SECONDS)
                if readable:
                    connection.execute("SELECT 1")
            except (OSError, ValueError, psycopg.Error) as error:
                with self._lock:
                    self._drop()
                if not self._stop.is_set():
                    log.warning("liveness lock lost (%s); taking it again", _said(error))

    def _take(self) -> bool:
        try:
            connection = psycopg.connect(
                self._conninfo,
                autocommit=True,
                connect_timeout=5,
                application_name="dominus liveness",
            )
        except psycopg.Error as error:
            self._say_not_held(f"cannot connect: {_said(error)}")
            return False
        try:
            row = connection.execute(
                "SELECT pg_try_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, self._key)
            ).fetchone()
        except psycopg.Error as error:
            connection.close()
            self._say_not_held(_said(error))
            return False
        if row is None or not row[0]:
            connection.close()
            self._say_not_held(f"key {self._key} is held by another session")
            return False
        self._connection = connection
        if self._retries.consecutive_failures:
            log.info("liveness lock held again")
        self._retries.succeeded()
        return True

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(psycopg.Error):
                connection.close()

    def _say_not_held(self, why: str) -> None:
        if not self._retries.consecutive_failures:
            log.warning("cannot hold the liveness lock (%s); will try again", why)


def _said(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
