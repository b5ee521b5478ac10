"""The scheduler of `dominus serve --with-scheduler`, in a thread of the server's process, and
the check `worker` and `serve` make at start-up for a scheduler that should be running.

Like the embedded worker, the embedded scheduler waits until the database is reachable and
migrated, then runs until the server stops; database trouble is its own business (it backs off
and carries on), except a SQLite file deleted or replaced under it: then the server stops, exit 1.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from dominus.cli.schema_wait import wait_for_the_schema
from dominus.errors import DatabaseError, DatabaseGoneError
from dominus.jobs.scheduling import Scheduler
from dominus.runtime import Runtime
from dominus.scheduling.service import ScheduleService

log = logging.getLogger("dominus.scheduler")


class EmbeddedScheduler:
    def __init__(
        self, runtime: Runtime, scheduler: Scheduler, on_fatal: Callable[[], None]
    ) -> None:
        self._runtime = runtime
        self._scheduler = scheduler
        self._on_fatal = on_fatal
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dominus-scheduler", daemon=True)
        self.failure: DatabaseGoneError | None = None

    def start(self) -> None:
        self._thread.start()

    def request_shutdown(self) -> None:
        """Stop waiting, or stop the scheduler (callable from a signal handler)."""
        self._stop.set()
        self._scheduler.request_shutdown()

    def join(self) -> None:
        self.request_shutdown()
        self._thread.join()

    def _run(self) -> None:
        if not wait_for_the_schema(self._runtime.engine, self._stop, "the scheduler", log):
            return
        try:
            self._scheduler.run()
        except DatabaseGoneError as error:  # logged by the scheduler
            self.failure = error
            self._on_fatal()


def warn_if_no_scheduler(service: ScheduleService) -> None:
    """Log a WARNING when schedules are enabled but no scheduler has ticked lately (their jobs
    are not being enqueued). A database that cannot answer is the caller's to report, not this
    check's."""
    try:
        warning = service.absent_scheduler()
    except DatabaseError as error:
        log.debug("could not check for a running scheduler: %s", error)
        return
    if warning is not None:
        log.warning("%s", warning)


def check_for_a_scheduler_soon(
    runtime: Runtime, service: ScheduleService, stop: threading.Event
) -> None:
    """`warn_if_no_scheduler` in a thread, once the database is usable (serve starts whatever
    its state); quietly dropped if the server stops first."""

    def check() -> None:
        if wait_for_the_schema(runtime.engine, stop, None, log):
            warn_if_no_scheduler(service)

    threading.Thread(target=check, name="dominus-scheduler-check", daemon=True).start()
