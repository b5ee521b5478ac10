"""The worker's per-job path without the database or threads, for instruction counts.

    python bench/worker_path.py 3000         # prints CPU µs per job (one thread)
    valgrind --tool=cachegrind --cache-sim=no python bench/worker_path.py 1000   # and 3000

Each job goes through what a worker does with it between the claim and the settle: `_dispatch`
(the attempt's objects), a pool thread's `_execute` (the start gate, `begin`, the handler, the
hand-over), `collect_finished` (the outcome) and `settled`. All in this thread, with the pool
replaced by a list and no store reached (the handler reports no progress and opens no
transaction), so under cachegrind the count is the same from run to run: the difference of the
counts at two sizes divided by the difference of the jobs is the path's instructions per job
(with `PYTHONHASHSEED=0` and the `.pyc` files compiled first). The claim, the settle's SQL and
the thread hand-offs are not in it: `cpu_per_job.py --test drain` measures the whole drain.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import BaseModel

from dominus.jobs import HandlerRegistry, Worker
from dominus.jobs.execution import HandlerPool, RunningJob
from dominus.jobs.model import Claim, Job, JobStatus
from dominus.jobs.store import JobStore
from dominus.jobs.worker_config import WorkerConfig

WARM_UP = 200


class Noop(BaseModel):
    i: int
    t: float


class ListPool:
    """Takes the place of the handler pool: what is submitted waits in a list."""

    waiting = 0

    def __init__(self) -> None:
        self.inbox: list[RunningJob] = []

    def submit(self, running: RunningJob) -> None:
        self.inbox.append(running)


class NoStore:
    """Only the progress sink is looked up (once, by the worker); never called here."""

    def record_progress(self, _claim: Claim, _progress: dict[str, Any], _now: datetime) -> bool:
        raise AssertionError("the handler reports no progress")


def run(jobs: int) -> None:
    handlers = HandlerRegistry()
    handlers.register("noop", lambda _payload, _context: None, Noop)
    worker = Worker(
        cast(JobStore, NoStore()), handlers, WorkerConfig(concurrency=1), worker_id="w1"
    )
    pool = ListPool()
    worker._pool = cast(HandlerPool, pool)
    attempts = worker._attempts
    now = datetime.now(UTC)
    for i in range(1, jobs + 1):
        job = Job(
            id=i,
            job_type="noop",
            payload={"i": i, "t": 1.5},
            status=JobStatus.RUNNING,
            priority=0,
            attempts=1,
            max_attempts=3,
            failure_count=0,
            run_at=now,
            created_at=now,
            updated_at=now,
            locked_by="w1",
        )
        worker._dispatch(job, now)
        worker._execute(pool.inbox.pop())
        attempts.collect_finished()
        outcomes = attempts.to_settle()
        attempts.settled(outcomes, [True] * len(outcomes))
    if not attempts.idle:
        raise RuntimeError("an attempt was left unsettled")


def main() -> None:
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 3_000
    run(WARM_UP)
    started = time.process_time()
    run(jobs)
    print(f"{1e6 * (time.process_time() - started) / jobs:.2f} µs/job")


if __name__ == "__main__":
    main()
