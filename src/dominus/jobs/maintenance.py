"""What a worker does for its backend in a thread of its own, so it never holds up the loop:

- every second, check that the database is still the one it opened (`JobStore.verify`: a SQLite
  file deleted or replaced under the worker); if not, tell the worker (`on_gone`) and stop;
- every `interval_seconds`, housekeeping (`JobStore.maintain`): on PostgreSQL servers whose
  autovacuum is off, VACUUM (ANALYZE) the queue tables now and then."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from dominus.errors import DatabaseGoneError

log = logging.getLogger("dominus.worker")

VERIFY_INTERVAL_SECONDS = 1.0


def _never_gone(_error: DatabaseGoneError) -> None:
    return None


class MaintenanceThread:
    def __init__(
        self,
        maintain: Callable[[], str | None],
        interval_seconds: float,
        *,
        verify: Callable[[], None] | None = None,
        on_gone: Callable[[DatabaseGoneError], None] = _never_gone,
    ) -> None:
        self._maintain = maintain
        self._interval = interval_seconds
        self._verify = verify
        self._on_gone = on_gone
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dominus-maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        next_maintenance = time.monotonic()
        while not self._stop.is_set():
            if not self._database_still_there():
                return
            if time.monotonic() >= next_maintenance:
                self._maintain_once()
                next_maintenance = time.monotonic() + self._interval
            wait = next_maintenance - time.monotonic()
            if self._verify is not None:
                wait = min(wait, VERIFY_INTERVAL_SECONDS)
            self._stop.wait(max(0.0, wait))

    def _database_still_there(self) -> bool:
        if self._verify is None:
            return True
        try:
            self._verify()
        except DatabaseGoneError as error:
            self._on_gone(error)
            return False
        except Exception as error:  # noqa: BLE001 - a failed check is not a verdict
            log.warning("could not check the database file (%s); will try again", error)
        return True

    def _maintain_once(self) -> None:
        try:
            done = self._maintain()
        except Exception as error:  # noqa: BLE001 - housekeeping must never kill a worker
            log.warning("queue maintenance failed (%s); will try again", error)
        else:
            if done:
                log.info("queue maintenance: %s", done)
