"""pgqueuer measurements: the same no-op workload through pgqueuer's `Queries.enqueue` (asyncpg,
its default driver; a scalar call enqueues one job, lists enqueue a batch in one statement) and
a QueueManager worker process at batch size 100 (`pgqueuer_worker.py`, which runs what
`pgq run` runs). Every run gets a fresh database, created from a template on which pgqueuer's
own CLI installed its schema (`pgq install`, default durability).

Timing comes from pgqueuer's own log table (`pgqueuer_log`: a row per transition, `created` =
the transaction's now()): drain = jobs / (last `successful` − first `picked`); pickup latency =
`picked` − `queued` of each job.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.queries import Queries

from common import (
    IDLE_BEFORE_LATENCY_SECONDS,
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
from pgqueuer_tasks import ENTRYPOINT

FILL_BATCH = 1_000


class PgqueuerBench:
    def __init__(
        self, server: PgServer, workdir: Path, bin_dir: Path, bench_dir: Path, batch_size: int
    ) -> None:
        self.server = server
        self.workdir = workdir
        self.bench_dir = bench_dir
        self.batch_size = batch_size
        self.python = Path(sys.executable)
        self._runs = 0
        self.template = server.create("pgqueuer_template")
        subprocess.run(
            [bin_dir / "pgq", "install"],
            env=self._env(self.template),
            cwd=workdir,
            check=True,
            capture_output=True,
        )

    def _env(self, database: str) -> dict[str, str]:
        env = dict(os.environ)
        path = [str(self.bench_dir), *filter(None, [env.get("PYTHONPATH")])]
        url = self.server.url(database)
        env.update(
            PYTHONPATH=os.pathsep.join(path),
            PGDSN=url,  # pgq's --pg-dsn
            BENCH_PGQUEUER_DSN=url,
            PYTHONFAULTHANDLER="1",
        )
        return env

    def _fresh(self) -> str:
        self._runs += 1
        return self.server.create(f"pgqueuer_{self._runs}", self.template)

    def _log(self, name: str) -> Path:
        return self.workdir / f"pgqueuer-{self._runs}-{name}.log"

    def _worker(self, database: str, log: Path, mode: str) -> subprocess.Popen[bytes]:
        command = [
            str(self.python),
            str(self.bench_dir / "pgqueuer_worker.py"),
            "--batch-size",
            str(self.batch_size),
            "--mode",
            mode,
        ]
        return start_logged(command, env=self._env(database), cwd=self.workdir, log=log)

    @staticmethod
    async def _queries(url: str) -> tuple[asyncpg.Connection, Queries]:
        connection = await asyncpg.connect(dsn=url)
        return connection, Queries(AsyncpgDriver(connection))

    # --- enqueue -------------------------------------------------------------------------
    def enqueue_single(self, jobs: int, warmup: int) -> float:
        database = self._fresh()

        async def measure() -> float:
            connection, queries = await self._queries(self.server.url(database))
            try:
                for _ in range(warmup):
                    await queries.enqueue(ENTRYPOINT, None)
                started = time.perf_counter()
                for _ in range(jobs):
                    await queries.enqueue(ENTRYPOINT, None)
                return time.perf_counter() - started
            finally:
                await connection.close()

        try:
            elapsed = asyncio.run(measure())
        finally:
            self.server.drop(database)
        return jobs / elapsed

    async def _enqueue_batches(self, url: str, jobs: int, batch_size: int) -> None:
        connection, queries = await self._queries(url)
        try:
            for start in range(0, jobs, batch_size):
                count = min(batch_size, jobs - start)
                await queries.enqueue([ENTRYPOINT] * count, [None] * count, [0] * count)
        finally:
            await connection.close()

    def enqueue_batched(self, jobs: int, batch_size: int) -> float:
        database = self._fresh()

        async def measure() -> float:
            connection, queries = await self._queries(self.server.url(database))
            entrypoints, payloads, priorities = (
                [ENTRYPOINT] * batch_size,
                [None] * batch_size,
                [0] * batch_size,
            )
            try:
                await queries.enqueue(entrypoints, payloads, priorities)  # warm-up
                started = time.perf_counter()
                for _ in range(jobs // batch_size):
                    await queries.enqueue(entrypoints, payloads, priorities)
                return time.perf_counter() - started
            finally:
                await connection.close()

        try:
            elapsed = asyncio.run(measure())
        finally:
            self.server.drop(database)
        return (jobs // batch_size) * batch_size / elapsed

    # --- drain ---------------------------------------------------------------------------
    def drain(self, jobs: int) -> Drain:
        database = self._fresh()
        log = self._log(f"drain-b{self.batch_size}")
        try:
            asyncio.run(self._enqueue_batches(self.server.url(database), jobs, FILL_BATCH))
            self.server.vacuum_analyze(database)
            sampler = CpuSampler(self.server)
            started = time.perf_counter()
            worker = self._worker(database, log, "drain")
            try:
                sampler.pids = [worker.pid]
                sampler.sample(force=True)
                codes, _ = wait_all([worker], timeout=120 + jobs / 20, on_tick=sampler.sample)
            except TimeoutError:
                stop_process(worker)
                raise RuntimeError(f"pgqueuer worker did not exit:\n{tail(log)}") from None
            wall = time.perf_counter() - started
            sampler.sample(force=True)
            if codes[0] != 0:
                raise RuntimeError(f"pgqueuer worker exited with {codes[0]}:\n{tail(log)}")
            rows = self.server.query(
                database,
                "SELECT status::text, count(*), min(created), max(created) FROM pgqueuer_log"
                " WHERE status IN ('picked', 'successful') GROUP BY status",
            )
            log_rows = {status: (count, first, last) for status, count, first, last in rows}
            picked, first_pick, _ = log_rows.get("picked", (0, None, None))
            done, _, last_done = log_rows.get("successful", (0, None, None))
            left = self.server.query(database, "SELECT count(*) FROM pgqueuer")[0][0]
            if done != jobs or left or first_pick is None:
                raise RuntimeError(
                    f"pgqueuer: {done} of {jobs} jobs successful ({picked} picks, {left} left "
                    f"in the queue):\n{tail(log)}"
                )
            span = (last_done - first_pick).total_seconds()
            cpu = sampler.window(first_pick.timestamp(), last_done.timestamp())
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
        """Enqueue→pick latencies (ms): an idle worker (continuous mode, default dequeue
        timeout 30 s, woken by the NOTIFY of pgqueuer's insert trigger)."""
        database = self._fresh()
        log = self._log("latency")
        url = self.server.url(database)
        worker = self._worker(database, log, "continuous")
        done_sql = "SELECT count(*) FROM pgqueuer_log WHERE status = 'successful'"
        try:

            async def send(count: int, rng: random.Random | None) -> list[int]:
                connection, queries = await self._queries(url)
                ids: list[int] = []
                try:
                    for _ in range(count):
                        ids += await queries.enqueue(ENTRYPOINT, None)
                        if rng is not None:
                            await asyncio.sleep(rng.uniform(*LATENCY_GAP_SECONDS))
                finally:
                    await connection.close()
                return ids

            def ran(count: int) -> bool:
                ensure_running(worker, "pgqueuer worker", log)
                return bool(self.server.query(database, done_sql)[0][0] >= count)

            # The worker is known to be up once it has run a first job.
            (first,) = asyncio.run(send(1, None))
            wait_for(lambda: ran(1), timeout=60, interval=0.02, what="pgqueuer's first job")
            time.sleep(IDLE_BEFORE_LATENCY_SECONDS)
            asyncio.run(send(jobs, random.Random(seed)))
            wait_for(
                lambda: ran(jobs + 1),
                timeout=60,
                interval=0.05,
                what="the latency jobs to complete",
            )
            rows = self.server.query(
                database,
                "SELECT extract(epoch FROM picked.created - queued.created) * 1000"
                "  FROM pgqueuer_log AS queued"
                "  JOIN pgqueuer_log AS picked"
                "    ON picked.job_id = queued.job_id AND picked.status = 'picked'"
                " WHERE queued.status = 'queued' AND queued.job_id > %s",
                (first,),
            )
            ensure_running(worker, "pgqueuer worker", log)
        finally:
            stop_process(worker, signal.SIGTERM)
            self.server.drop(database)
        if len(rows) != jobs:
            raise RuntimeError(f"pgqueuer: {len(rows)} latency samples, expected {jobs}")
        return [float(row[0]) for row in rows]
