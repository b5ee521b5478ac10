"""huey measurements: the same workload through SqliteHuey and one `huey_consumer` process
(`-k thread`, default polling options, `-q` so that it logs at WARNING like the DOMINUS
worker). Every run gets a fresh database file."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import huey_tasks
from common import (
    IDLE_BEFORE_LATENCY_SECONDS,
    LATENCY_CONCURRENCY,
    LATENCY_GAP_SECONDS,
    Drain,
    ensure_running,
    remove_db,
    start_logged,
    stop_process,
    wait_for,
)

# How often the drain looks for the last result: `max(rowid)` on the result table is one
# B-tree descent, read in WAL mode without blocking the consumer's writes.
RESULT_POLL_SECONDS = 0.005


class HueyBench:
    def __init__(self, workdir: Path, bin_dir: Path, bench_dir: Path, synchronous: str) -> None:
        self.workdir = workdir
        self.consumer = bin_dir / "huey_consumer"
        self.bench_dir = bench_dir
        self.synchronous = synchronous
        self._runs = 0

    def _fresh(self) -> Path:
        self._runs += 1
        path = self.workdir / f"huey-{self._runs}.db"
        remove_db(path)
        return path

    def _log(self, name: str) -> Path:
        return self.workdir / f"huey-{self._runs}-{name}.log"

    def _start_consumer(self, db: Path, workers: int, log: Path) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        path = [str(self.bench_dir), *filter(None, [env.get("PYTHONPATH")])]
        env.update(
            PYTHONPATH=os.pathsep.join(path),
            BENCH_HUEY_DB=str(db),
            BENCH_HUEY_SYNCHRONOUS=self.synchronous,
        )
        command = [self.consumer, "huey_tasks.huey", "-w", str(workers), "-k", "thread", "-q"]
        return start_logged(command, env=env, cwd=self.workdir, log=log)

    def settings(self) -> str:
        db = self._fresh()
        app, _ = huey_tasks.build(db, self.synchronous)
        try:
            return huey_tasks.settings(app)
        finally:
            app.storage.close()
            remove_db(db)

    # --- enqueue -------------------------------------------------------------------------
    def enqueue_single(self, jobs: int, warmup: int) -> float:
        db = self._fresh()
        app, task = huey_tasks.build(db, self.synchronous)
        try:
            for _ in range(warmup):
                task()
            started = time.perf_counter()
            for _ in range(jobs):
                task()
            elapsed = time.perf_counter() - started
        finally:
            app.storage.close()
            remove_db(db)
        return jobs / elapsed

    # --- drain ---------------------------------------------------------------------------
    def drain(self, jobs: int, workers: int) -> Drain:
        """All tasks are enqueued first; throughput = jobs / (the moment the last result is
        seen stored - the earliest task start, which each task returns)."""
        db = self._fresh()
        log = self._log(f"drain-w{workers}")
        app, task = huey_tasks.build(db, self.synchronous)
        for _ in range(jobs):
            task()
        app.storage.close()
        watch = sqlite3.connect(db)
        started = time.perf_counter()
        consumer = self._start_consumer(db, workers, log)
        try:

            def all_stored() -> bool:
                # Results are only ever added during a drain, so max(rowid) counts them; the
                # exact count(*) confirms it once.
                newest = watch.execute("SELECT max(rowid) FROM kv").fetchone()[0] or 0
                if newest < jobs:
                    ensure_running(consumer, "huey_consumer", log)
                    return False
                return bool(watch.execute("SELECT count(*) FROM kv").fetchone()[0] >= jobs)

            wait_for(
                all_stored,
                timeout=max(300, jobs / 50),
                interval=RESULT_POLL_SECONDS,
                what="huey to store every result",
            )
            done = time.time()
            wall = time.perf_counter() - started
        finally:
            stop_process(consumer, signal.SIGINT)
            watch.close()
        try:
            starts = [
                app.serializer.deserialize(value) for value in app.storage.result_items().values()
            ]
        finally:
            app.storage.close()
            remove_db(db)
        if len(starts) != jobs:
            raise RuntimeError(f"huey stored {len(starts)} results, expected {jobs}")
        return Drain(jobs=jobs, throughput=jobs / (done - min(starts)), wall_seconds=wall)

    # --- pickup latency ------------------------------------------------------------------
    def latency(self, jobs: int, seed: int) -> list[float]:
        """Enqueue→start latencies (ms): the task returns time.time() when it starts; the
        enqueue time is time.time() just before the task is called."""
        db = self._fresh()
        log = self._log("latency")
        app, task = huey_tasks.build(db, self.synchronous)
        consumer = self._start_consumer(db, LATENCY_CONCURRENCY, log)
        try:
            # The consumer is known to be up once it has run a first task.
            task().get(blocking=True, timeout=60)
            ensure_running(consumer, "huey_consumer", log)
            time.sleep(IDLE_BEFORE_LATENCY_SECONDS)
            rng = random.Random(seed)
            sent = []
            for _ in range(jobs):
                enqueued_at = time.time()
                sent.append((enqueued_at, task()))
                time.sleep(rng.uniform(*LATENCY_GAP_SECONDS))
            latencies = [
                (handle.get(blocking=True, timeout=60) - enqueued_at) * 1000
                for enqueued_at, handle in sent
            ]
        finally:
            stop_process(consumer, signal.SIGINT)
            app.storage.close()
            remove_db(db)
        return latencies
