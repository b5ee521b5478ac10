"""The drain with keys in use (ADR 0052, 0053): 5,000 `diag.noop` jobs drained by one burst
`dominus worker` process (concurrency 8), on SQLite and PostgreSQL, with
(a) no keys, (b) every job on one concurrency key whose limit never binds (10,000), and
(c) every job with one rate key whose limit never binds (10,000/s, configured through
RATE_LIMITS as an operator would): jobs/s from the first start to the last finish, the median of
3 runs of each, the three interleaved so that a change in the machine's load touches all three.

    PYTHONPATH=src python bench/drain_keys.py [--pg-url URL] [--runs 3] [--jobs 5000]

Every database it makes is a fresh file (SQLite) or `dominus_drainkeys_<pid>` (PostgreSQL),
dropped afterwards.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine, text

from claim_keys import database
from dominus.handlers import build_registry
from dominus.jobs import EnqueueRequest, JobQueue, SqlJobStore
from dominus.schema.migrate import upgrade

NOOP = "diag.noop"
CONCURRENCY = 8
KEY = "bench"
NEVER_BINDING_LIMIT = 10_000  # a concurrency limit far above the worker's concurrency
NEVER_BINDING_RATE = "10000/s"  # far above any drain rate measured on this machine
FILL_BATCH = 1_000

SCENARIOS: dict[str, Callable[[], EnqueueRequest]] = {
    "no keys": lambda: EnqueueRequest(NOOP),
    "concurrency key": lambda: EnqueueRequest(
        NOOP, concurrency_key=KEY, concurrency_limit=NEVER_BINDING_LIMIT
    ),
    "rate key": lambda: EnqueueRequest(NOOP, rate_key=KEY),
}


def drain(backend: str, pg_url: str, scenario: str, jobs: int) -> float:
    """Jobs per second of one burst worker draining `jobs` jobs of `scenario`."""
    with database(backend, pg_url) as engine:
        upgrade(engine)
        queue = JobQueue(SqlJobStore(engine), build_registry(diagnostic_jobs=True))
        request = SCENARIOS[scenario]()
        for start in range(0, jobs, FILL_BATCH):
            queue.enqueue_jobs([request] * min(FILL_BATCH, jobs - start))
        if backend == "postgresql":  # statistics as autovacuum would have them
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(text("VACUUM ANALYZE job_queue"))
        _run_worker(engine)
        return _throughput(engine, jobs)


def _run_worker(engine: Engine) -> None:
    dominus = Path(sys.executable).parent / "dominus"
    env = dict(os.environ)
    env.update(
        DATABASE_URL=engine.url.render_as_string(hide_password=False),
        DOMINUS_LOG_LEVEL="WARNING",
        RATE_LIMITS=f"{KEY}={NEVER_BINDING_RATE}",
    )
    command = [str(dominus), "worker", "--diagnostic-jobs", "--burst"]
    command += ["--concurrency", str(CONCURRENCY)]
    started = time.perf_counter()
    done = subprocess.run(
        command, check=False, env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker exited {done.returncode}: {done.stderr[-2000:]}")
    print(f"      (worker ran {time.perf_counter() - started:.1f} s)", flush=True)


def _throughput(engine: Engine, jobs: int) -> float:
    with engine.connect() as connection:
        completed, first, last, attempts = connection.execute(
            text(
                "SELECT count(*), min(started_at), max(finished_at), max(attempts) "
                "FROM job_queue WHERE status = 'completed'"
            )
        ).one()
    if completed != jobs or attempts != 1:
        raise RuntimeError(f"{completed} of {jobs} jobs completed, most attempts {attempts}")
    if isinstance(first, str):  # SQLite through text(): the stored naive UTC text
        first, last = datetime.fromisoformat(first), datetime.fromisoformat(last)
    return float(jobs / (last - first).total_seconds())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=5_000)
    options = parser.parse_args()
    backends = ("sqlite", "postgresql") if options.backend == "both" else (options.backend,)
    for backend in backends:
        rates: dict[str, list[float]] = {scenario: [] for scenario in SCENARIOS}
        for run in range(options.runs):
            for scenario in SCENARIOS:
                rate = drain(backend, options.pg_url, scenario, options.jobs)
                rates[scenario].append(rate)
                print(f"{backend:10} run {run + 1} {scenario:16} {rate:8.0f} jobs/s", flush=True)
        base = statistics.median(rates["no keys"])
        for scenario, values in rates.items():
            median = statistics.median(values)
            runs = ", ".join(f"{value:.0f}" for value in values)
            print(
                f"{backend:10} {scenario:16} median {median:6.0f} jobs/s "
                f"({median / base - 1:+.1%} against no keys; runs {runs})",
                flush=True,
            )


if __name__ == "__main__":
    main()
