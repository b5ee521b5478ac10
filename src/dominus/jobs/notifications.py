"""Push wake-ups on PostgreSQL: LISTEN/NOTIFY.

Enqueue (and anything else that makes a job pending) sends `NOTIFY dominus_jobs` inside its own
transaction, so a rolled-back enqueue wakes nobody, with the earliest `run_at` of those jobs as
its payload when the sender knows it (ADR 0062); a cancel request sends `NOTIFY
dominus_cancel, '<worker id>'`. Each worker keeps one extra connection that LISTENs on both
channels in a background thread and wakes the loop. When that connection breaks, the listener
says so, the worker falls back to its poll interval, and the listener reconnects with backoff;
each time LISTEN takes effect (at start and after a reconnect) it wakes the loop once, since
notifications sent before were lost.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

import psycopg

from dominus.jobs.backoff import Backoff, FailureStreak
from dominus.jobs.notifications_channels import CANCEL_CHANNEL, JOBS_CHANNEL, due_from_payload
from dominus.jobs.wakeup import JobsCallback

log = logging.getLogger("dominus.worker")

# After a lost connection: 0.5 s, 1 s, 2 s, 4 s, 8 s, then every 10 s (no jitter, as before).
RECONNECT_BACKOFF = Backoff(base_seconds=0.5, max_seconds=10.0)
# How long a blocking wait for notifications lasts before the thread checks whether to stop.
WAIT_SLICE_SECONDS = 0.5


class PostgresListener:
    """A `ChangeWatcher` that is pushed to: LISTEN in a thread of its own."""

    needs_polling = False

    def __init__(self, conninfo: str, worker_id: str | None = None) -> None:
        self._conninfo = conninfo
        self._worker_id = worker_id
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None
        self._on_jobs: JobsCallback = _no_jobs
        self._on_cancel: Callable[[], None] = _nothing
        self._had_connection = False
        self._reconnects = FailureStreak(RECONNECT_BACKOFF)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def start(
        self,
        on_jobs: JobsCallback,
        on_cancel: Callable[[], None],
        worker_id: str | None = None,
    ) -> None:
        self._on_jobs, self._on_cancel = on_jobs, on_cancel
        self._worker_id = worker_id or self._worker_id
        self._thread = threading.Thread(target=self._run, name="dominus-listen", daemon=True)
        self._thread.start()

    def changed(self) -> bool:
        return False

    def close(self) -> None:
        """Stop listening (the thread notices within WAIT_SLICE_SECONDS)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except psycopg.Error as error:
                if self._stop.is_set():
                    break
                self._connected.clear()
                delay = self._reconnects.failed()
                log.warning(
                    "LISTEN connection lost (%s); polling until it is back, reconnecting in %g s",
                    str(error).strip() or type(error).__name__,
                    delay,
                )
                self._stop.wait(delay)
        self._connected.clear()

    def _listen(self) -> None:
        with psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5) as connection:
            connection.execute(f"LISTEN {JOBS_CHANNEL}")
            connection.execute(f"LISTEN {CANCEL_CHANNEL}")
            reconnected = not self._connected.is_set() and self._had_connection
            self._connected.set()
            self._reconnects.succeeded()  # the next outage starts from the shortest delay
            self._had_connection = True
            if reconnected:
                log.info("LISTEN connection re-established; notifications are back")
            # Look once now: a job enqueued before LISTEN took effect (between the worker's
            # first poll and this connection, or during an outage) sent its notification to
            # no one, and would otherwise wait for the next poll.
            self._on_jobs(None)
            while not self._stop.is_set():
                for notification in connection.notifies(timeout=WAIT_SLICE_SECONDS):
                    self._dispatch(notification.channel, notification.payload)

    def _dispatch(self, channel: str, payload: str) -> None:
        if channel == JOBS_CHANNEL:
            self._on_jobs(due_from_payload(payload))
        elif channel == CANCEL_CHANNEL and (not payload or payload == self._worker_id):
            self._on_cancel()


def _nothing() -> None:
    return None


def _no_jobs(_due_at: datetime | None) -> None:
    return None
