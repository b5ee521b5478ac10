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

from dominus.cli.schema_wait import wait_for_the_schema
from dominus.errors import DatabaseGoneError
from dominus.jobs.client import JobQueue
from dominus.jobs.worker import Worker
from dominus.runtime import Runtime

log = logging.getLogger("dominus.worker")


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
            on_dead_letter=runtime.dead_letter_hook(),
            limiters=runtime.limiters,
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
        if not wait_for_the_schema(self._runtime.engine, self._stop, "the worker", log):
            return
        try:
            self._worker.run()
        except DatabaseGoneError as error:  # logged by the worker
            self.failure = error
            self._on_fatal()
