"""The abort signal every running job gets. It is set when a user cancels the job, when the
job's timeout passes, when the worker shuts down, or when the worker finds it lost the job's
claim. Handlers check it between units of work (`raise_if_set`, `wait`) or register a callback.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from enum import StrEnum

from dominus.errors import JobAbortedError

log = logging.getLogger(__name__)


class AbortReason(StrEnum):
    CANCELLED = "cancelled"  # a user asked for it
    TIMEOUT = "timeout"  # the job ran longer than its timeout
    SHUTDOWN = "shutdown"  # the worker is stopping and the graceful wait is over
    LOST = "lost"  # the job was reclaimed from this worker; another attempt owns it now


class AbortSignal:
    """A one-shot, thread-safe flag with a reason. The first reason set wins."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reason: AbortReason | None = None
        self._callbacks: list[Callable[[AbortReason], None]] = []
        # Made on the first `wait`: most handlers never wait, and a worker creates one signal
        # per job on its hottest path.
        self._event: threading.Event | None = None

    @property
    def reason(self) -> AbortReason | None:
        return self._reason

    def is_set(self) -> bool:
        return self._reason is not None

    def set(self, reason: AbortReason) -> bool:
        """Set the signal. Returns False if it was already set (the first reason stays)."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason
            callbacks = list(self._callbacks)
            event = self._event
        if event is not None:
            event.set()
        for callback in callbacks:
            self._run(callback, reason)
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep up to `timeout` seconds, waking early when the signal is set. True if set."""
        with self._lock:
            if self._reason is not None:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)

    def raise_if_set(self) -> None:
        reason = self._reason
        if reason is not None:
            raise JobAbortedError(f"job aborted: {reason.value}")

    def on_abort(self, callback: Callable[[AbortReason], None]) -> None:
        """Call `callback(reason)` once when the signal is set (at once if it already is)."""
        with self._lock:
            reason = self._reason
            if reason is None:
                self._callbacks.append(callback)
                return
        self._run(callback, reason)

    @staticmethod
    def _run(callback: Callable[[AbortReason], None], reason: AbortReason) -> None:
        try:
            callback(reason)
        except Exception:
            log.exception("abort callback failed")
