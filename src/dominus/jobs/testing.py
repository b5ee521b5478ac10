"""Helpers for tests of code that runs on the engine: step a real worker until the queue is
drained (no sleeping on timers, no fake store)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from dominus.jobs.clock import utc_now
from dominus.jobs.worker import Worker


def drain(worker: Worker, *, clock: Callable[[], datetime] = utc_now, timeout: float = 30) -> int:
    """Testing helper: step `worker` until a tick finds nothing to claim and nothing is left
    running or unrecorded. Returns how many jobs it claimed."""
    claimed = 0
    while True:
        worker.wake()
        report = worker.run_once(clock())
        if report.failed:
            raise RuntimeError("worker tick failed; see the log")
        claimed += report.claimed
        if not worker.wait_until_idle(timeout):
            raise TimeoutError("handlers still running after the drain timeout")
        if report.claimed == 0 and report.settled == 0 and worker.idle:
            return claimed
