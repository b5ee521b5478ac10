"""Housekeeping a backend needs from its workers, in a thread of its own so it never holds up
the loop. Today: on PostgreSQL servers whose autovacuum is off, VACUUM (ANALYZE) the queue
tables now and then (see `SqlJobStore.maintain`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("dominus.worker")


class MaintenanceThread:
    def __init__(self, maintain: Callable[[], str | None], interval_seconds: float) -> None:
        self._maintain = maintain
        self._interval = interval_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dominus-maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                done = self._maintain()
            except Exception as error:  # noqa: BLE001 - housekeeping must never kill a worker
                log.warning("queue maintenance failed (%s); will try again", error)
            else:
                if done:
                    log.info("queue maintenance: %s", done)
            self._stop.wait(self._interval)
