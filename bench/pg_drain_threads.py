"""PostgreSQL drain in one process: jobs/s, the process's CPU per job, the worker loop thread's
part of it, and the server backends' CPU per job (read from /proc while the drain runs).

    PYTHONPATH=src python bench/pg_drain_threads.py [--jobs 20000] [--concurrency 100] [--runs 3]

Each run drops and recreates the database `pgprobe` on the local server (127.0.0.1:5432, user
postgres, trust). The workload is bench/cpu_per_job.py's: a `noop` job type with a pydantic
payload, every job enqueued before the worker starts. Which thread spends the CPU tells where a
change can help: the loop thread claims, settles and dispatches; the handler threads run jobs.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

import psycopg

from cpu_per_job import filled_worker
from dominus.config import Settings
from dominus.db.engine import create_database_engine
from dominus.runtime import build_runtime
from dominus.schema.migrate import upgrade

DATABASE = "pgprobe"
URL = f"postgresql+psycopg://postgres@127.0.0.1:5432/{DATABASE}"
ADMIN = "host=127.0.0.1 user=postgres dbname=postgres"


def fresh_database() -> None:
    with psycopg.connect(ADMIN, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {DATABASE}")
    engine = create_database_engine(URL)
    upgrade(engine)
    engine.dispose()


def backends_cpu_seconds() -> float:
    """CPU time of every server process connected to the database now, from
    /proc/<pid>/schedstat (nanoseconds: /proc/<pid>/stat counts in 10 ms ticks, 2 µs a job at
    5,000 jobs)."""
    with psycopg.connect(ADMIN) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", (DATABASE,)
        ).fetchall()
    nanoseconds = 0
    for (pid,) in rows:
        try:
            nanoseconds += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        except OSError:
            continue  # gone meanwhile
    return nanoseconds / 1e9


def one_run(jobs: int, concurrency: int) -> str:
    fresh_database()
    runtime = build_runtime(Settings(DATABASE_URL=URL, DOMINUS_LOG_LEVEL="WARNING"))
    worker, handler = filled_worker(runtime, jobs, concurrency)
    loop_cpu = [0.0]

    def run_worker() -> None:
        started = time.thread_time()
        worker.run()
        loop_cpu[0] = time.thread_time() - started

    backends_before = backends_cpu_seconds()
    backends_last = backends_before
    cpu, wall = time.process_time(), time.perf_counter()
    thread = threading.Thread(target=run_worker)
    thread.start()
    while thread.is_alive():
        # The backends' CPU is read while they live: at the worker's close they are gone
        time.sleep(0.05)
        backends_last = max(backends_last, backends_cpu_seconds())
    thread.join()
    cpu = time.process_time() - cpu
    seconds = handler.finished_at - wall
    runtime.engine.dispose()
    per_job = 1e6 / jobs
    return (
        f"{jobs / seconds:,.0f} jobs/s; CPU per job: process {cpu * per_job:.1f} µs, "
        f"loop thread {loop_cpu[0] * per_job:.1f} µs, "
        f"backends {(backends_last - backends_before) * per_job:.1f} µs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for _ in range(args.runs):
        print(one_run(args.jobs, args.concurrency), flush=True)


if __name__ == "__main__":
    main()
