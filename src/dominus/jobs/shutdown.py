"""A worker's graceful shutdown: its three steps and their deadlines.

1. drain: once shutdown is requested, stop claiming and let running handlers finish, for up to
   the graceful timeout;
2. abort: when the graceful timeout is over and handlers still run, set their abort signals and
   give them the abort grace to stop;
3. give up: when the abort grace is over too, record the jobs of handlers that ignored their
   abort as interrupted, without waiting for them any longer.

The sequence only keeps time and says which step is due; the worker performs it on the attempts
it holds (`Worker._advance_shutdown`, `Attempts`). Requests may come from any thread; the rest is
called from the worker's loop thread.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from enum import Enum

log = logging.getLogger("dominus.worker")


class ShutdownStep(Enum):
    DRAIN = "drain"  # stop claiming
    ABORT = "abort"  # abort every running handler
    GIVE_UP = "give up"  # record handlers still running as interrupted


class ShutdownSequence:
    def __init__(self, *, graceful_seconds: float, abort_grace_seconds: float) -> None:
        self._graceful = timedelta(seconds=graceful_seconds)
        self._abort_grace = timedelta(seconds=abort_grace_seconds)
        self._requested = threading.Event()
        self._drain_deadline: datetime | None = None
        self._abort_deadline: datetime | None = None

    def request(self) -> None:
        """From any thread: begin at the loop's next tick."""
        self._requested.set()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    @property
    def draining(self) -> bool:
        """The sequence has begun: the worker claims nothing more."""
        return self._drain_deadline is not None

    def advance(self, now: datetime, running: int) -> list[ShutdownStep]:
        """The steps due at `now`, given how many handlers are still running. DRAIN and ABORT
        are said once; GIVE_UP at every call once its deadline has passed (the worker's step is
        idempotent)."""
        if not self.requested:
            return []
        steps: list[ShutdownStep] = []
        if self._drain_deadline is None:
            self._drain_deadline = now + self._graceful
            steps.append(ShutdownStep.DRAIN)
            if running:
                log.info(
                    "shutting down: waiting up to %g s for %d running job(s)",
                    self._graceful.total_seconds(),
                    running,
                )
        if self._abort_deadline is None and now >= self._drain_deadline and running:
            log.warning("graceful timeout over; aborting %d running job(s)", running)
            self._abort_deadline = now + self._abort_grace
            steps.append(ShutdownStep.ABORT)
        if self._abort_deadline is not None and now >= self._abort_deadline:
            steps.append(ShutdownStep.GIVE_UP)
        return steps

    def next_deadline(self, running: int) -> datetime | None:
        """When the next step falls due, if handlers are still running to be waited for."""
        if not running or self._drain_deadline is None:
            return None
        return self._abort_deadline or self._drain_deadline
