"""CPU per job of a SQLite single enqueue and of a drain, in this process.

On a shared machine wall rates swing with the other processes' load; the CPU time this
process spends (`time.process_time`: every thread, user and system) per job does not, or far
less. So both are reported, per repetition and as medians, with the load average.

    python bench/cpu_per_job.py                      # enqueue and drain at concurrency 1
    python bench/cpu_per_job.py --test drain --concurrency 4 --reps 5
    python bench/cpu_per_job.py --test enqueue --profile   # one more run under cProfile

The workload is the peer benchmark's (`../shared/bench-peers/adapters/dominus_jobs.py`): a
`noop` job type with a pydantic payload model `{i: int, t: float}`, enqueued through
`JobQueue.enqueue_job` one call (one transaction) per job; drained by a `Worker` built from the
runtime (its clock, its change watcher, default settings) with the given concurrency, started
when the jobs are already pending (enqueued in batches, untimed). Each repetition gets a fresh
database file in a temporary directory.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from dominus.config import Settings
from dominus.db.engine import create_database_engine
from dominus.jobs import EnqueueRequest, HandlerRegistry, JobQueue, Worker
from dominus.jobs.execution import HandlerPool
from dominus.runtime import Runtime, build_runtime
from dominus.schema.migrate import upgrade

WARM_UP = 200
FILL_BATCH = 1_000


class Noop(BaseModel):
    i: int
    t: float


@dataclass(frozen=True)
class Sample:
    cpu_seconds: float
    wall_seconds: float
    jobs: int

    @property
    def cpu_us_per_job(self) -> float:
        return 1e6 * self.cpu_seconds / self.jobs

    @property
    def rate(self) -> float:
        return self.jobs / self.wall_seconds


class Drained:
    """The handler: counts the jobs it ran and, at the last one, shuts the worker down."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.count = 0
        self.worker: Worker | None = None
        self.finished_at = 0.0
        self._lock = threading.Lock()

    def __call__(self, payload: Noop, context: Any) -> None:
        with self._lock:
            self.count += 1
            last = self.count == self.jobs
        if last:
            self.finished_at = time.perf_counter()
            assert self.worker is not None
            self.worker.request_shutdown()


def fresh_runtime(directory: Path) -> Runtime:
    url = f"sqlite:///{directory / 'bench.db'}"
    engine = create_database_engine(url)
    upgrade(engine)
    engine.dispose()
    return build_runtime(Settings(DATABASE_URL=url, DOMINUS_LOG_LEVEL="WARNING"))


def registry(handler: Callable[[Noop, Any], None]) -> HandlerRegistry:
    handlers = HandlerRegistry()
    handlers.register("noop", handler, Noop)
    return handlers


def measure_enqueue(jobs: int, profile: cProfile.Profile | None = None) -> Sample:
    with tempfile.TemporaryDirectory(prefix="cpu-per-job-") as directory:
        runtime = fresh_runtime(Path(directory))
        queue = JobQueue(runtime.store, registry(lambda _p, _c: None), clock=runtime.clock)
        for i in range(WARM_UP):
            queue.enqueue_job("noop", {"i": i, "t": time.time()})
        if profile is not None:
            profile.enable()
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(jobs):
            queue.enqueue_job("noop", {"i": i, "t": time.time()})
        sample = Sample(time.process_time() - cpu, time.perf_counter() - wall, jobs)
        if profile is not None:
            profile.disable()
        runtime.engine.dispose()
    return sample


def enqueue_noops(queue: JobQueue, jobs: int) -> None:
    """`jobs` noop jobs, enqueued in batches of FILL_BATCH (untimed set-up)."""
    for start in range(0, jobs, FILL_BATCH):
        now = time.time()
        queue.enqueue_jobs(
            EnqueueRequest("noop", {"i": i, "t": now})
            for i in range(start, min(jobs, start + FILL_BATCH))
        )


def filled_worker(runtime: Runtime, jobs: int, concurrency: int) -> tuple[Worker, Drained]:
    """`jobs` noop jobs enqueued (in batches, untimed) and the worker that will drain them,
    stopped by its handler at the last one."""
    handler = Drained(jobs)
    handlers = registry(handler)
    enqueue_noops(JobQueue(runtime.store, handlers, clock=runtime.clock), jobs)
    worker = Worker(
        runtime.store,
        handlers,
        runtime.worker_config(concurrency=concurrency),
        clock=runtime.clock,
        watcher=runtime.change_watcher(),
    )
    handler.worker = worker
    return worker, handler


def measure_drain(jobs: int, concurrency: int, profile: cProfile.Profile | None = None) -> Sample:
    with tempfile.TemporaryDirectory(prefix="cpu-per-job-") as directory:
        runtime = fresh_runtime(Path(directory))
        worker, handler = filled_worker(runtime, jobs, concurrency)
        if profile is not None:
            profile.enable()
        cpu, wall = time.process_time(), time.perf_counter()
        worker.run()
        cpu_seconds = time.process_time() - cpu
        if profile is not None:
            profile.disable()
        runtime.engine.dispose()
    if handler.count != jobs:
        raise RuntimeError(f"the worker ran {handler.count} jobs of {jobs}")
    return Sample(cpu_seconds, handler.finished_at - wall, jobs)


class ThreadProfiles:
    """cProfile for the worker's handler threads too (a profile covers one thread): each
    `HandlerPool` thread runs under a profile of its own, all added up at the end."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._serve = HandlerPool._serve

    def __enter__(self) -> ThreadProfiles:
        serve = self._serve
        profiles = self.profiles

        def profiled_serve(pool: HandlerPool) -> None:
            profile = cProfile.Profile()
            profiles.append(profile)
            profile.runcall(serve, pool)

        HandlerPool._serve = profiled_serve  # type: ignore[method-assign]
        return self

    def __exit__(self, *_: object) -> None:
        HandlerPool._serve = self._serve  # type: ignore[method-assign]


def print_profile(main: cProfile.Profile, threads: list[cProfile.Profile], top: int) -> None:
    stats = pstats.Stats(main)
    for profile in threads:
        profile.create_stats()
        stats.add(profile)
    stats.sort_stats("tottime").print_stats(top)


def report(name: str, samples: list[Sample]) -> None:
    cpu = [sample.cpu_us_per_job for sample in samples]
    rates = [sample.rate for sample in samples]
    cpu_runs = ", ".join(f"{value:.1f}" for value in cpu)
    rate_runs = ", ".join(f"{value:,.0f}" for value in rates)
    print(
        f"{name}: CPU {statistics.median(cpu):.1f} µs/job (runs {cpu_runs}); "
        f"wall {statistics.median(rates):,.0f} jobs/s (runs {rate_runs})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--test", choices=["enqueue", "drain", "both"], default="both")
    parser.add_argument("--jobs", type=int, default=5_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="one more run under cProfile")
    parser.add_argument("--top", type=int, default=40, help="profile lines shown")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    runs: dict[str, Callable[[cProfile.Profile | None], Sample]] = {}
    if args.test in ("enqueue", "both"):
        runs["single enqueue"] = lambda profile: measure_enqueue(args.jobs, profile)
    if args.test in ("drain", "both"):
        runs[f"drain c{args.concurrency}"] = lambda profile: measure_drain(
            args.jobs, args.concurrency, profile
        )
    for name, run in runs.items():
        report(name, [run(None) for _ in range(args.reps)])
        if args.profile:
            profile = cProfile.Profile()
            with ThreadProfiles() as threads:
                run(profile)
            print_profile(profile, threads.profiles, args.top)
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
