#!/usr/bin/env python3
"""How soon a SIGKILLed worker's job runs again on a live worker, with the default settings
(5-minute max running age, 15 s heartbeat, 5 s poll, retries from 1 s): only the dead worker's
free liveness lock (ADR 0037) can bring it back before the max running age.

Each round: a victim `dominus worker` (concurrency 1) starts a 60 s job, a rescuer worker runs
beside it, the victim is SIGKILLed, and the time from the kill to the job's start on the rescuer
is measured (from the rescuer's log line, to the millisecond).

    .venv/bin/python bench/rescue_latency.py --backend sqlite --rounds 10
    .venv/bin/python bench/rescue_latency.py --backend postgresql --rounds 10
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from common import percentiles, wait_for  # noqa: E402
from dominus.db.engine import create_database_engine  # noqa: E402
from dominus.jobs import HandlerRegistry, JobQueue, JobStatus, SqlJobStore  # noqa: E402
from dominus.jobs.diagnostic import register_diagnostic_jobs  # noqa: E402
from dominus.schema.migrate import upgrade  # noqa: E402
from pg import DEFAULT_URL, PgServer  # noqa: E402

DEFAULTS = {
    "JOB_QUEUE_POLL_INTERVAL_MS": "5000",
    "JOB_HEARTBEAT_INTERVAL_MS": "15000",
    "JOB_MAX_RUNNING_AGE_MS": "300000",
    "JOB_RETRY_BASE_MS": "1000",
    "DOMINUS_DIAGNOSTIC_JOBS": "1",
    "DOMINUS_LOG_LEVEL": "INFO",
}
_STARTED = re.compile(r"^(\S+ \S+) INFO\s+dominus\.worker: job (\d+) diag\.sleep started", re.M)


def start_worker(url: str, log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JOB_", "WORKER_"))}
    env |= DEFAULTS | {"DATABASE_URL": url, "WORKER_CONCURRENCY": "1"}
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "dominus.cli.main", "worker", "--diagnostic-jobs"],
            stdout=subprocess.DEVNULL,
            stderr=out,
            env=env,
            cwd=log.parent,
        )


def started_at(log: Path, job_id: int) -> float | None:
    for stamp, job in _STARTED.findall(log.read_text(errors="replace")):
        if int(job) == job_id:
            moment = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").astimezone(UTC)
            return moment.timestamp()
    return None


def one_round(url: str, directory: Path, number: int) -> float:
    store = SqlJobStore(create_database_engine(url))
    queue = JobQueue(store, register_diagnostic_jobs(HandlerRegistry()))
    victim_log, rescuer_log = (
        directory / f"victim-{number}.log",
        directory / f"rescuer-{number}.log",
    )
    victim = start_worker(url, victim_log)
    rescuer: subprocess.Popen[bytes] | None = None
    try:
        job_id = queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
        wait_for(
            lambda: started_at(victim_log, job_id) is not None,
            timeout=60,
            interval=0.05,
            what="the victim to start the job",
        )
        rescuer = start_worker(url, rescuer_log)
        wait_for(
            lambda: "started: concurrency" in rescuer_log.read_text(errors="replace"),
            timeout=60,
            interval=0.05,
            what="the rescuer to start",
        )
        killed = time.time()
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        wait_for(
            lambda: started_at(rescuer_log, job_id) is not None,
            timeout=400,
            interval=0.05,
            what="the job to start on the rescuer",
        )
        again = started_at(rescuer_log, job_id)
        assert again is not None
        job = store.get_job(job_id)
        assert job.status is JobStatus.RUNNING and job.attempts == 2, job
        return again - killed
    finally:
        for process in (victim, rescuer):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(10)
        store.engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), required=True)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--pg-url", default=DEFAULT_URL)
    args = parser.parse_args()
    delays = []
    server = PgServer(args.pg_url) if args.backend == "postgresql" else None
    with tempfile.TemporaryDirectory(prefix="dominus-rescue-") as temp:
        directory = Path(temp)
        try:
            for number in range(args.rounds):
                if server is not None:
                    url = server.sqlalchemy_url(server.create(f"rescue{number}"))
                else:
                    url = f"sqlite:///{directory / f'rescue-{number}.db'}"
                engine = create_database_engine(url)
                upgrade(engine)
                engine.dispose()
                delay = one_round(url, directory, number)
                delays.append(delay)
                print(f"round {number + 1}: running again {delay:.2f} s after the kill", flush=True)
        finally:
            if server is not None:
                server.drop_all()
    figures = percentiles(delays)
    print(
        f"{args.backend}: {len(delays)} rounds, kill → running again on a live worker: "
        + ", ".join(f"{name} {value:.2f} s" for name, value in figures.items())
        + f", max {max(delays):.2f} s"
    )


if __name__ == "__main__":
    main()
