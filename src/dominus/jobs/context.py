"""What a handler receives besides its payload: the job, its abort signal, a progress reporter
and a logger."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dominus.jobs.abort import AbortSignal
from dominus.jobs.model import Claim, Job

log = logging.getLogger(__name__)

# (claim, progress, now) -> whether the claim still holds
ProgressSink = Callable[[Claim, dict[str, Any], datetime], bool]


class ProgressReporter:
    """Persists a job's progress, at most once per `interval_seconds`; the latest value is
    always kept and written with the job's outcome, so nothing reported is lost to throttling."""

    def __init__(
        self,
        claim: Claim,
        sink: ProgressSink,
        clock: Callable[[], datetime],
        interval_seconds: float,
        on_lost: Callable[[], None],
    ) -> None:
        self._claim = claim
        self._sink = sink
        self._clock = clock
        self._interval = interval_seconds
        self._on_lost = on_lost
        self._lock = threading.Lock()
        self._latest: dict[str, Any] | None = None
        self._unwritten = False
        self._last_write: datetime | None = None

    def report(self, progress: dict[str, Any]) -> None:
        now = self._clock()
        with self._lock:
            self._latest = dict(progress)
            self._unwritten = True
            due = (
                self._last_write is None
                or (now - self._last_write).total_seconds() >= self._interval
            )
            if not due:
                return
            self._last_write = now
            self._unwritten = False
            snapshot = self._latest
        try:
            if not self._sink(self._claim, snapshot, now):
                self._on_lost()
        except Exception as error:  # noqa: BLE001 - progress is best effort; the job carries on
            log.warning("job %s: could not save progress: %s", self._claim.job_id, error)
            with self._lock:
                self._unwritten = True

    def unwritten(self) -> dict[str, Any] | None:
        """The latest progress if it has not been persisted yet (to write with the outcome)."""
        with self._lock:
            return self._latest if self._unwritten else None


@dataclass(frozen=True)
class JobContext:
    """Passed to every handler as its second argument."""

    job: Job
    abort: AbortSignal
    logger: logging.LoggerAdapter[logging.Logger]
    progress_reporter: ProgressReporter

    def progress(self, **fields: Any) -> None:
        """Report progress, e.g. `ctx.progress(stage="dns", done=40, total=100)`. Persisted
        (throttled) and shown by `dominus jobs show` / `jobs wait`."""
        self.progress_reporter.report(fields)
