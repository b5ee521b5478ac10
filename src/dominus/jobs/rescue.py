"""Rescuing the jobs of dead workers in seconds, without taking a live worker for dead.

A worker whose liveness lock (`liveness.py`) is free holds no process any more, with two
exceptions this module guards against:

- On PostgreSQL the lock lives on a connection, and a connection can end while its process
  lives (a terminated backend, a server restart). The worker notices within a second and takes
  the lock again, and claims nothing while it does not hold it. So a worker counts as dead only
  when its lock was free at two looks at least `confirm_seconds` apart.
- While the database is in trouble for this worker (failing, stalled, restarting), every other
  worker's lock may be down with it. Looks made during trouble, or within `settle_seconds`
  after it, count for nothing: the suspicion starts over.

Jobs of a worker found dead are reclaimed as a silent worker's are (fenced on the claim, the
attempt spent, due again after the retry delay); only the evidence differs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime

from dominus.jobs.model import ReclaimedJob
from dominus.jobs.reaper import log_taken_back
from dominus.jobs.store import JobStore, RetryDelay


class DeadWorkerRescue:
    def __init__(
        self,
        store: JobStore,
        worker_id: str,
        *,
        confirm_seconds: float,
        settle_seconds: float,
        retry_delay: RetryDelay,
        troubled_since: Callable[[datetime], float | None],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """`troubled_since(now)`: seconds since this worker's latest database trouble ended
        (0 while it lasts), or None if it has seen none."""
        self._store = store
        self._worker_id = worker_id
        self._confirm = confirm_seconds
        self._settle = settle_seconds
        self._retry_delay = retry_delay
        self._troubled_since = troubled_since
        self._monotonic = monotonic
        self._lock = threading.Lock()
        # Workers whose lock was free at every look since the first (monotonic time of it).
        self._suspects: dict[str, float] = {}
        self._looked = False  # a look has been made and answered

    def maybe_rescue(self, now: datetime) -> list[ReclaimedJob]:
        """Look at the locks of the workers holding running jobs; reclaim the jobs of those
        confirmed dead. Raises the store's errors (the caller's duty logs them)."""
        with self._lock:
            if self._in_trouble(now):
                self._suspects.clear()
                return []
            try:
                free = self._store.workers_found_dead(self._worker_id)
            except Exception:
                self._suspects.clear()  # a failed look breaks the chain of looks
                raise
            looked_at = self._monotonic()
            self._looked = True
            self._suspects = {worker: self._suspects.get(worker, looked_at) for worker in free}
            dead = [w for w, since in self._suspects.items() if looked_at - since >= self._confirm]
        if not dead:
            return []
        reclaimed = self._store.reclaim_from_dead(dead, now, self._retry_delay)
        with self._lock:
            for worker in dead:
                self._suspects.pop(worker, None)
        log_taken_back(reclaimed, "rescued from dead worker")
        return reclaimed

    def settled(self) -> bool:
        """Whether a look has been made and left no worker under suspicion: a burst worker
        waits for this, so that the jobs of a worker killed before it started are rescued and
        run rather than left `running` until a long-lived worker comes by."""
        with self._lock:
            return self._looked and not self._suspects

    def _in_trouble(self, now: datetime) -> bool:
        since = self._troubled_since(now)
        return since is not None and since < self._settle
