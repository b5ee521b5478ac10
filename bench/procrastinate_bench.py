"""procrastinate measurements: the same no-op workload through procrastinate's sync API
(`task.defer()`, `task.batch_defer()`) and its documented worker
(`procrastinate --app=procrastinate_tasks.app worker`). Every run gets a fresh database, created
from a template whose schema procrastinate's own CLI applied (`procrastinate schema --apply`).

Timing comes from procrastinate's own event table (`procrastinate_events`, one row per
transition, `at` = the transaction's now()): drain = jobs / (last `succeeded` − first `started`);
pickup latency = `started` − `deferred` of each job.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import procrastinate_tasks
from common import (
    IDLE_BEFORE_LATENCY_SECONDS,
    LATENCY_CONCURRENCY,
    LATENCY_GAP_SECONDS,
    Drain,
    ensure_running,
    start_logged,
    stop_process,
    tail,
    wait_all,
    wait_for,
)
from pg import CpuSampler, PgServer

FILL_BATCH = 1_000


class ProcrastinateBench:
    def __init__(self, server: PgServer, workdir: Path, bin_dir: Path, bench_dir: Path) -> None:
        self.server = server
        self.workdir = workdir
        self.cli = bin_dir / "procrastinate"
        self.bench_dir = bench_dir
        self._runs = 0
        self.template = server.create("procrastinate_template")
        subprocess.run(
            [self.cli, "--app=procrastinate_tasks.app", "schema", "--apply"],
            env=self._env(self.template),
            cwd=workdir,
            check=True,
            capture_output=True,
        )

    def _env(self, database: str) -> dict[str, str]:
        env = dict(os.environ)
        path = [str(self.bench_dir), *filter(None, [env.get("PYTHONPATH")])]
        env.update(
            PYTHONPATH=os.pathsep.join(path),
            BENCH_PROCRASTINATE_DSN=self.server.url(database),
            PYTHONFAULTHANDLER="1",
        )
        return env

    def _fresh(self) -> str:
        self._runs += 1
        return self.server.create(f"procrastinate_{self._runs}", self.template)

    def _log(self, name: str) -> Path:
        return self.workdir / f"procrastinate-{self._runs}-{name}.log"

    def _worker(
        self, database: str, concurrency: int, log: Path, *, one_shot: bool
    ) -> subprocess.Popen[bytes]:
        command = [
            str(self.cli),
            "--log-level=warning",
            "--app=procrastinate_tasks.app",
            "worker",
            "--concurrency",
            str(concurrency),
        ]
        if one_shot:
            command.append("--one-shot")  # exit once no job is left (wait=False)
        return start_logged(command, env=self._env(database), cwd=self.workdir, log=log)

    # --- enqueue -------------------------------------------------------------------------
    def enqueue_single(self, jobs: int, warmup: int) -> float:
        database = self._fresh()
        app, task = procrastinate_tasks.build(self.server.url(database))
        try:
            with app.open():
                for _ in range(warmup):
                    task.defer()
                started = time.perf_counter()
                for _ in range(jobs):
                    task.defer()
                elapsed = time.perf_counter() - started
        finally:
            self.server.drop(database)
        return jobs / elapsed

    def enqueue_batched(self, jobs: int, batch_size: int) -> float:
        database = self._fresh()
        app, task = procrastinate_tasks.build(self.server.url(database))
        batch = [{}] * batch_size
        try:
            with app.open():
                task.batch_defer(*batch)  # warm-up
                started = time.perf_counter()
                for _ in range(jobs // batch_size):
                    task.batch_defer(*batch)
                elapsed = time.perf_counter() - started
        finally:
            self.server.drop(database)
        return (jobs // batch_size) * batch_size / elapsed

    # --- drain ---------------------------------------------------------------------------
    def drain(self, jobs: int, concurrency: int) -> Drain:
        database = self._fresh()
        log = self._log(f"drain-c{concurrency}")
        try:
            app, task = procrastinate_tasks.build(self.server.url(database))
            with app.open():
                for start in range(0, jobs, FILL_BATCH):
                    task.batch_defer(*([{}] * min(FILL_BATCH, jobs - start)))
            self.server.vacuum_analyze(database)
            sampler = CpuSampler(self.server)
            started = time.perf_counter()
            worker = self._worker(database, concurrency, log, one_shot=True)
            try:
                sampler.pids = [worker.pid]
                sampler.sample(force=True)
                codes, _ = wait_all([worker], timeout=120 + jobs / 20, on_tick=sampler.sample)
            except TimeoutError:
                stop_process(worker)
                raise RuntimeError(f"procrastinate worker did not exit:\n{tail(log)}") from None
            wall = time.perf_counter() - started
            sampler.sample(force=True)
            if codes[0] != 0:
                raise RuntimeError(f"procrastinate worker exited with {codes[0]}:\n{tail(log)}")
            rows = self.server.query(
                database,
                "SELECT type::text, count(*), min(at), max(at) FROM procrastinate_events"
                " WHERE type IN ('started', 'succeeded') GROUP BY type",
            )
            events = {kind: (count, first, last) for kind, count, first, last in rows}
            started_count, first_start, _ = events.get("started", (0, None, None))
            done, _, last_done = events.get("succeeded", (0, None, None))
            if done != jobs or started_count != jobs or first_start is None:
                raise RuntimeError(
                    f"procrastinate: {done} of {jobs} jobs succeeded ({started_count} started)"
                    f":\n{tail(log)}"
                )
            span = (last_done - first_start).total_seconds()
            cpu = sampler.window(first_start.timestamp(), last_done.timestamp())
            return Drain(
                jobs=jobs,
                throughput=jobs / span,
                wall_seconds=wall,
                worker_cpu_seconds=cpu[0] if cpu else None,
                db_cpu_seconds=cpu[1] if cpu else None,
                cpu_span_seconds=cpu[2] if cpu else None,
            )
        finally:
            self.server.drop(database)

    # --- pickup latency ------------------------------------------------------------------
    def latency(self, jobs: int, seed: int) -> list[float]:
        """Enqueue→start latencies (ms): an idle worker at concurrency 2 with the default
        polling interval (5 s) and LISTEN/NOTIFY (on by default)."""
        database = self._fresh()
        log = self._log("latency")
        worker = self._worker(database, LATENCY_CONCURRENCY, log, one_shot=False)
        try:

            def registered() -> bool:
                ensure_running(worker, "procrastinate worker", log)
                sql = "SELECT count(*) FROM procrastinate_workers"
                return bool(self.server.query(database, sql)[0][0])

            wait_for(registered, timeout=60, interval=0.02, what="the worker to register")
            time.sleep(IDLE_BEFORE_LATENCY_SECONDS)
            app, task = procrastinate_tasks.build(self.server.url(database))
            rng = random.Random(seed)
            with app.open():
                for _ in range(jobs):
                    task.defer()
                    time.sleep(rng.uniform(*LATENCY_GAP_SECONDS))
            sql = "SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'"
            wait_for(
                lambda: self.server.query(database, sql)[0][0] >= jobs,
                timeout=60,
                interval=0.05,
                what="the latency jobs to succeed",
            )
            rows = self.server.query(
                database,
                "SELECT extract(epoch FROM started.at - deferred.at) * 1000"
                "  FROM procrastinate_events AS deferred"
                "  JOIN procrastinate_events AS started"
                "    ON started.job_id = deferred.job_id AND started.type = 'started'"
                " WHERE deferred.type = 'deferred'",
            )
            ensure_running(worker, "procrastinate worker", log)
        finally:
            stop_process(worker, signal.SIGTERM)
            self.server.drop(database)
        if len(rows) != jobs:
            raise RuntimeError(f"procrastinate: {len(rows)} latency samples, expected {jobs}")
        return [float(row[0]) for row in rows]
