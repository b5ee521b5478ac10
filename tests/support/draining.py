"""Step a real worker from the test's own thread (no sleeping on timers, no fake store): wait
for its handlers to return, or tick it until the queue is drained."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from dominus.jobs import Worker, utc_now


def wait_until_idle(worker: Worker, timeout: float) -> bool:
    """Block until every handler `worker` dispatched has returned (its outcome is recorded by
    the next tick). False if some are still running after `timeout` seconds."""
    give_up = time.monotonic() + timeout
    while worker.handlers_in_flight:
        if time.monotonic() >= give_up:
            return False
        time.sleep(0.002)
    return True


def drain(worker: Worker, *, clock: Callable[[], datetime] = utc_now, timeout: float = 30) -> int:
    """Tick `worker` until a tick finds nothing to claim and nothing is left running or
    unrecorded. Returns how many jobs it claimed."""
    claimed = 0
    while True:
        worker.wake()
        report = worker.run_once(clock())
        if report.failed:
            raise RuntimeError("worker tick failed; see the log")
        claimed += report.claimed
        if not wait_until_idle(worker, timeout):
            raise TimeoutError("handlers still running after the drain timeout")
        if report.claimed == 0 and report.settled == 0 and worker.idle:
            return claimed
