"""The worker of `dominus serve --with-worker`, in a thread of the server's process.

The server starts whatever the state of the database (ADR 0006, 0011), so its worker may find
the database unreachable or not migrated yet. It waits, saying why, until the schema is at this
code's revision, and only then runs: a worker must never claim jobs on a schema it does not
know. Once it runs, database trouble is the worker's own business (it backs off and carries on),
except a SQLite file deleted or replaced under it: then the whole server stops, exit 1."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from dominus.db.migrate import ensure_migrated
from dominus.errors import DatabaseError, DatabaseGoneError
from dominus.jobs.client import JobQueue
from dominus.jobs.worker import Worker
from dominus.runtime import Runtime

log = logging.getLogger("dominus.worker")

# How often a waiting worker looks at the database again: soon at first, then every few seconds.
FIRST_LOOK_SECONDS = 0.5
LOOK_EVERY_SECONDS = 5.0


class EmbeddedWorker:
    def __init__(
        self,
        runtime: Runtime,
        queue: JobQueue,
        concurrency: int | None,
        on_fatal: Callable[[], None],
    ) -> None:
        self._runtime = runtime
        self._worker = Worker(
            runtime.store,
            runtime.registry(diagnostic_jobs=runtime.settings.DOMINUS_DIAGNOSTIC_JOBS),
            runtime.worker_config(concurrency),
            clock=runtime.clock,
            watcher=runtime.change_watcher(),
        )
        queue.subscribe(self._worker.wake)
        self._on_fatal = on_fatal
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dominus-worker", daemon=True)
        self.failure: DatabaseGoneError | None = None

    def start(self) -> None:
        self._thread.start()

    def request_shutdown(self) -> None:
        """Stop waiting, or stop the worker gracefully (callable from a signal handler)."""
        self._stop.set()
        self._worker.request_shutdown()

    def join(self) -> None:
        self.request_shutdown()
        self._thread.join()

    def _run(self) -> None:
        if not self._wait_for_the_schema():
            return
        try:
            self._worker.run()
        except DatabaseGoneError as error:  # logged by the worker
            self.failure = error
            self._on_fatal()

    def _wait_for_the_schema(self) -> bool:
        """True once the database is reachable and migrated; False if asked to stop first."""
        delay, reported = FIRST_LOOK_SECONDS, None
        while not self._stop.is_set():
            try:
                ensure_migrated(self._runtime.engine)
            except DatabaseError as error:
                if str(error) != reported:  # say it once per reason, not once per look
                    reported = str(error)
                    log.warning("the worker waits for the database: %s", reported)
                self._stop.wait(delay)
                delay = min(delay * 2, LOOK_EVERY_SECONDS)
                continue
            if reported is not None:
                log.info("the database is ready: the worker starts")
            return True
        return False
