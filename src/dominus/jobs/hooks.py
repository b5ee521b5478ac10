"""Hooks a worker calls when something worth telling a person happens (a job dead-lettered).

The engine knows nothing of what a hook does (a webhook, a log line, an e-mail): the process that
builds the worker passes the hook in. A hook may be slow (an HTTP call with retries), so it never
runs on the worker's loop thread, whose heartbeats keep its claims alive: `HookRunner` hands each
call to one daemon thread of its own, in order. A hook that raises is logged and forgotten; it
never reaches the loop. Calls are made after the transition is committed, by the process that
made it; a process that dies in between makes none (at most once).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("dominus.worker")

# How long `close` waits for queued calls at shutdown before leaving them to the daemon thread.
DEFAULT_DRAIN_SECONDS = 10.0


class HookRunner:
    """Runs `hook(value)` calls one at a time on a daemon thread started on the first call."""

    def __init__(self, name: str, hook: Callable[[Any], None]) -> None:
        self._name = name
        self._hook = hook
        self._calls: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pending = 0  # submitted and not yet returned; guarded by _lock
        self._idle = threading.Condition(self._lock)

    def submit(self, value: object) -> None:
        with self._lock:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"dominus-{self._name}", daemon=True
                )
                self._thread.start()
        self._calls.put(value)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every submitted call has returned (or `timeout` seconds). True if idle."""
        give_up = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                remaining = give_up - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def close(self, timeout: float = DEFAULT_DRAIN_SECONDS) -> None:
        if not self.wait_idle(timeout):
            log.warning(
                "%s: %d call(s) still running or queued after %g s; not waiting for them",
                self._name,
                self._pending,
                timeout,
            )

    def _run(self) -> None:
        while True:
            value = self._calls.get()
            try:
                self._hook(value)
            except Exception:
                log.exception("%s hook failed", self._name)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()
