"""What a worker does beside its loop, on a thread of its own, so it never holds up a tick:

- every second, check that the database is still the one it opened (`JobStore.verify`: a SQLite
  file deleted or replaced under the worker); if not, tell the worker (`on_gone`) and stop;
- its periodic duties, each at its own interval: reclaiming the jobs of silent workers across
  the cluster (ADR 0032), and housekeeping (`JobStore.maintain`: on PostgreSQL servers whose
  autovacuum is off, VACUUM (ANALYZE) the queue tables now and then).

A duty that raises is logged and tried again at its next turn: none of them may kill a worker."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dominus.errors import DatabaseBusyError, DatabaseGoneError

log = logging.getLogger("dominus.worker")

VERIFY_INTERVAL_SECONDS = 1.0


def _never_gone(_error: DatabaseGoneError) -> None:
    return None


@dataclass(frozen=True)
class PeriodicDuty:
    name: str  # what the log calls it when it fails
    interval_seconds: float
    run: Callable[[], object]  # what it returns is not used
    # How long after the thread starts the duty first runs (at once by default).
    first_after_seconds: float = 0.0


class MaintenanceThread:
    def __init__(
        self,
        duties: Sequence[PeriodicDuty],
        *,
        verify: Callable[[], None] | None = None,
        on_gone: Callable[[DatabaseGoneError], None] = _never_gone,
    ) -> None:
        self._duties = list(duties)
        self._verify = verify
        self._on_gone = on_gone
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dominus-maintenance", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def stop(self) -> None:
        self._stop.set()
        if self.started and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _run(self) -> None:
        begun = time.monotonic()
        due = [begun + duty.first_after_seconds for duty in self._duties]
        while not self._stop.is_set():
            if not self._database_still_there():
                return
            for index, duty in enumerate(self._duties):
                if self._stop.is_set():
                    return
                if time.monotonic() >= due[index]:
                    self._perform(duty)
                    due[index] = time.monotonic() + duty.interval_seconds
            wait = min(due, default=time.monotonic() + VERIFY_INTERVAL_SECONDS) - time.monotonic()
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

    @staticmethod
    def _perform(duty: PeriodicDuty) -> None:
        try:
            duty.run()
        except DatabaseBusyError as error:
            log.info("%s: database busy (%s); will try again", duty.name, error)
        except Exception as error:  # noqa: BLE001 - a duty must never kill a worker
            log.warning("%s failed (%s); will try again", duty.name, error)


def housekeeping(maintain: Callable[[], str | None]) -> Callable[[], None]:
    """`JobStore.maintain` as a duty: it says what it did, if anything."""

    def run() -> None:
        done = maintain()
        if done:
            log.info("queue maintenance: %s", done)

    return run
