"""The interpreter's garbage collector while a worker runs.

CPython collects its youngest generation every 700 net allocations of container objects. A
worker's garbage per job is freed by reference counting as soon as the job is settled; what
those collections find is the work in flight (claimed jobs, attempts, outcomes), scanned again
and again, and every tenth collection promotes it so that full passes over the whole heap (the
program's modules, classes and caches) follow. Measured on a SQLite drain at concurrency 1
(bench/RESULTS.md): about 5 µs of a job's 35 µs of CPU. So while a worker runs, the youngest
generation's threshold is raised (10,000 by default, `WORKER_GC_THRESHOLD`); cycles are still
collected, a little later. The application's own choice is kept: a threshold already at or above
the worker's is left alone, and the previous one is put back when the worker stops (unless
something else changed it meanwhile).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def young_generation_threshold(threshold: int | None) -> Iterator[None]:
    """Within the block, collect the youngest generation after at least `threshold` net
    allocations (None: leave the collector as it is)."""
    before = gc.get_threshold()
    if threshold is None or before[0] == 0 or before[0] >= threshold:
        # Not set, collection switched off by threshold 0, or already as high: nothing to do.
        yield
        return
    raised = (threshold, *before[1:])
    gc.set_threshold(*raised)
    try:
        yield
    finally:
        if gc.get_threshold() == raised:
            gc.set_threshold(*before)
