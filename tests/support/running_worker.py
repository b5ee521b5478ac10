"""A real `Worker` running its loop on a thread of its own, for tests that need one live."""

from __future__ import annotations

import threading

from dominus.jobs import Worker


class RunningWorker:
    def __init__(self, worker: Worker, *, stop_timeout: float = 15) -> None:
        self.worker = worker
        self.stop_timeout = stop_timeout
        self.thread = threading.Thread(target=worker.run, daemon=True)
        self.thread.start()

    def stop(self, timeout: float | None = None) -> None:
        self.worker.request_shutdown()
        self.thread.join(self.stop_timeout if timeout is None else timeout)
        assert not self.thread.is_alive(), "worker did not stop"
