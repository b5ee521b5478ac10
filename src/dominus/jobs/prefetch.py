"""How many jobs a worker claims beyond its free slots (ADR 0033).

A worker that claims only for free slots pays one database transaction, and two thread hand-offs
through its loop, per job: for jobs that take microseconds that is nearly all the time a job
costs. Claiming ahead lets a handler thread take its next job straight from the pool's inbox and
lets the loop record completions in batches. Claiming ahead also takes jobs away from other
workers, which matters for jobs that take long: so the budget follows the handlers' recent run
times and claims ahead only about `window_seconds` of work, and nothing once a job takes longer
than that.

The budget is measured in the handler threads and read by the loop: a float, written whole, so
no lock. Jobs claimed ahead wait: sync ones in the pool's inbox, async ones in the worker until
the `StartGate` lets them start; the gate keeps the concurrency over both kinds.
"""

from __future__ import annotations

import threading

# How much the newest run time weighs against those before it.
SMOOTHING = 0.2


class PrefetchBudget:
    def __init__(self, max_jobs: int, window_seconds: float) -> None:
        self._max_jobs = max_jobs
        self._window = window_seconds
        self._typical_seconds: float | None = None
        # `refill_below` as of the last observation: read by a handler thread after each job.
        self._refill_below = 1

    def observe(self, seconds: float) -> None:
        """A handler ran for `seconds`."""
        typical = self._typical_seconds
        seconds = max(seconds, 0.0)
        typical = seconds if typical is None else typical + SMOOTHING * (seconds - typical)
        self._typical_seconds = typical
        self._refill_below = max(1, self._ahead(typical) // 2)

    @property
    def jobs(self) -> int:
        """How many jobs to hold beyond the handler threads: about a window's worth of work."""
        return self.jobs_while(0.0)

    def jobs_while(self, longest_running_seconds: float) -> int:
        """The same, while a handler has been running for `longest_running_seconds`: a job
        running longer than the window says the jobs are not all quick, whatever came before."""
        typical = self._typical_seconds
        if typical is None:
            return 0
        return self._ahead(max(typical, longest_running_seconds))

    def _ahead(self, typical: float) -> int:
        """Jobs to hold beyond the handler threads when a job typically takes `typical` s."""
        if self._max_jobs <= 0:
            return 0
        if typical <= 0:
            return self._max_jobs
        return min(self._max_jobs, int(self._window / typical))

    @property
    def refill_below(self) -> int:
        """Wake the loop to claim more when fewer than this many jobs wait in the pool. Kept
        from the last observation: it changes only then, and is read after every job."""
        return self._refill_below


class StartGate:
    """At most `capacity` handlers started at once, sync and async together (the worker's
    concurrency). A pool thread waits at the gate with its next job; the worker's loop hands an
    async job to the event loop only when the gate lets it in without waiting."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._inside = 0
        # Threads waiting in `enter`: `leave` notifies only when there are any (a notify finds
        # its waiters under the condition's own lock; at concurrency 1 nobody ever waits).
        self._waiting = 0
        # Taken directly rather than through the condition's `with` (a Python-level call each
        # way): the gate is entered and left once per job.
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def enter(self) -> None:
        with self._lock:
            while self._inside >= self._capacity:
                self._waiting += 1
                try:
                    self._changed.wait()
                finally:
                    self._waiting -= 1
            self._inside += 1

    def try_enter(self) -> bool:
        with self._lock:
            if self._inside >= self._capacity:
                return False
            self._inside += 1
            return True

    def leave(self) -> None:
        with self._lock:
            self._inside -= 1
            if self._waiting:
                self._changed.notify()
