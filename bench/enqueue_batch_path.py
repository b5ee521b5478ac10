"""SQLite enqueue, batched or one job a call, in one process, for instruction counts.

    python bench/enqueue_batch_path.py batch 10      # 10 calls of enqueue_jobs, 1,000 jobs each
    python bench/enqueue_batch_path.py single 2000   # 2,000 calls of enqueue_job
    PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=no \\
        --cachegrind-out-file=/dev/null python bench/enqueue_batch_path.py batch 30

The peer benchmark's workload (`cpu_per_job.py`): a `noop` type whose payload model is
`{i: int, t: float}`, each job `{"i": i, "t": t}`, the batch built by the caller as the
harness builds it (`EnqueueRequest(...)` per job, inside the counted part). A fresh migrated
database file in a temporary directory each run; one warm-up call first. Under cachegrind the
difference of the counts at two sizes divided by the difference of the jobs is the
instructions per job (start-up and the warm-up cancel out).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from cpu_per_job import fresh_runtime, registry
from dominus.jobs import EnqueueRequest, JobQueue

BATCH = 1_000


def enqueue_batches(queue: JobQueue, calls: int) -> None:
    for call in range(calls):
        t = time.time()
        start = call * BATCH
        queue.enqueue_jobs(
            [EnqueueRequest("noop", {"i": i, "t": t}) for i in range(start, start + BATCH)]
        )


def enqueue_singles(queue: JobQueue, calls: int) -> None:
    for i in range(calls):
        queue.enqueue_job("noop", {"i": i, "t": time.time()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("batch", "single"))
    parser.add_argument("calls", type=int)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="enqueue-batch-path-") as directory:
        runtime = fresh_runtime(Path(directory))
        queue = JobQueue(runtime.store, registry(lambda _p, _c: None), clock=runtime.clock)
        run = enqueue_batches if args.mode == "batch" else enqueue_singles
        run(queue, 1)  # warm-up: caches, prepared statements
        started = time.perf_counter()
        run(queue, args.calls)
        elapsed = time.perf_counter() - started
        jobs = args.calls * (BATCH if args.mode == "batch" else 1)
        print(f"{args.mode}: {jobs} jobs in {elapsed:.3f} s ({jobs / elapsed:,.0f} jobs/s)")
        runtime.engine.dispose()


if __name__ == "__main__":
    main()
