"""The worker loop's store calls per job (claim and settle), in one thread, for instruction counts.

    python bench/loop_path.py fill sqlite 3000      # untimed: a fresh database with 3000 jobs
    python bench/loop_path.py drain sqlite 3000     # settle-and-claim them all, in batches
    python bench/loop_path.py fill postgres 3000    # the same on the local server (pgprobe)
    valgrind --tool=cachegrind --cache-sim=no python bench/loop_path.py drain sqlite 1000

Each tick settles the jobs the last one claimed (completed, as a worker's outcomes) and claims
the next `--batch` (1: a worker at concurrency 1; 100 as at concurrency 100) in one store call:
`JobStore.settle(outcomes, now, claim_for=...)`, the loop's own transaction. No handler runs and
no outcome is made from a handler's result (`worker_path.py` counts that part). Filled in a
process of its own, so under cachegrind the count is the loop's: the difference of the counts at
two sizes divided by the difference of the jobs is its instructions per job in this process (on
PostgreSQL the server's work is not in it). The enqueue is the same `noop` workload as
`cpu_per_job.py`'s.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import UTC, datetime

from cpu_per_job import Noop, enqueue_noops
from dominus.config import Settings
from dominus.db.engine import create_database_engine
from dominus.jobs import HandlerRegistry, JobQueue
from dominus.jobs.model import ClaimRequest, Completed, Job
from dominus.runtime import build_runtime
from dominus.schema.migrate import upgrade
from pg_drain_threads import URL as POSTGRES_URL
from pg_drain_threads import fresh_database

SQLITE_URL = "sqlite:////tmp/loop-path.db"


def url_of(backend: str) -> str:
    return SQLITE_URL if backend == "sqlite" else POSTGRES_URL


def fill(backend: str, jobs: int) -> None:
    if backend == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(f"/tmp/loop-path.db{suffix}"):
                os.remove(f"/tmp/loop-path.db{suffix}")
        engine = create_database_engine(SQLITE_URL)
        upgrade(engine)
        engine.dispose()
    else:
        fresh_database()
    runtime = build_runtime(Settings(DATABASE_URL=url_of(backend), DOMINUS_LOG_LEVEL="WARNING"))
    handlers = HandlerRegistry()
    handlers.register("noop", lambda _payload, _context: None, Noop)
    enqueue_noops(JobQueue(runtime.store, handlers, clock=runtime.clock), jobs)
    runtime.engine.dispose()


def completed(job: Job, now: datetime) -> Completed:
    return Completed(
        job.claim,
        None,
        job_type=job.job_type,
        duration_seconds=0.001,
        pickup_seconds=job.pickup_seconds(now),
    )


def drain(backend: str, jobs: int, batch: int) -> None:
    runtime = build_runtime(Settings(DATABASE_URL=url_of(backend), DOMINUS_LOG_LEVEL="WARNING"))
    store = runtime.store
    request = ClaimRequest("loop-path", ["noop"], batch)
    claimed: list[Job] = []
    done = 0
    while True:
        now = datetime.now(UTC)
        outcomes = [completed(job, now) for job in claimed]
        accepted, claimed = store.settle(outcomes, now, claim_for=request)
        if not all(accepted):
            raise RuntimeError("a completion was refused")
        done += len(outcomes)
        if not claimed:
            break
    runtime.engine.dispose()
    if done != jobs:
        raise RuntimeError(f"settled {done} jobs of {jobs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["fill", "drain"])
    parser.add_argument("backend", choices=["sqlite", "postgres"])
    parser.add_argument("jobs", type=int)
    parser.add_argument("--batch", type=int, default=1)
    arguments = parser.parse_args()
    if arguments.step == "fill":
        fill(arguments.backend, arguments.jobs)
        return
    started = time.process_time()
    drain(arguments.backend, arguments.jobs, arguments.batch)
    print(f"{1e6 * (time.process_time() - started) / arguments.jobs:.2f} µs/job")


if __name__ == "__main__":
    main()
