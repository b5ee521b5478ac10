"""DOMINUS measurements on PostgreSQL: enqueue through the Python API in this process; drains
(one or several worker processes) and pickup latency with real `dominus worker` processes.
Every run gets a fresh database, created from a template migrated with `dominus db upgrade`."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

from sqlalchemy import Engine

from common import (
    IDLE_BEFORE_LATENCY_SECONDS,
    LATENCY_CONCURRENCY,
    LATENCY_GAP_SECONDS,
    Drain,
    ensure_running,
    process_cpu_seconds,
    start_logged,
    stop_process,
    tail,
    wait_all,
    wait_for,
)
from dominus.db.engine import create_database_engine
from dominus.handlers import build_registry
from dominus.jobs import DatabaseClock, EnqueueRequest, JobQueue, SqlJobStore
from dominus.jobs.notifications_channels import JOBS_CHANNEL
from pg import CpuSampler, PgServer

NOOP = "diag.noop"
OUT_DIR = Path(__file__).resolve().parent / "out"
FILL_BATCH = 1_000

# 1M finished rows in one statement: status completed, timestamps spread over the last 30 days
# (started 1 ms and finished 2 ms after creation), payload and result '{}'.
_PREFILL = """
    INSERT INTO job_queue (job_type, payload, status, priority, attempts, max_attempts,
        failure_count, run_at, created_at, updated_at, started_at, finished_at, heartbeat_at,
        locked_by, result)
    SELECT 'diag.noop', '{}'::jsonb, 'completed', 0, 1, 3, 0, t, t, t + interval '2 ms',
           t + interval '1 ms', t + interval '2 ms', t + interval '1 ms', 'prefill:1:000000',
           '{}'::jsonb
      FROM (SELECT now() - interval '30 days' + (interval '30 days' / %(rows)s) * i AS t
              FROM generate_series(0, %(rows)s - 1) AS i) AS series
"""


class DrainObserver(Protocol):
    """Watches a warm drain (`bench/pg_profile.py`): `begin` just before the commit that makes
    the jobs due, `tick` every poll until none is pending or running, `end` right after."""

    def begin(self, database: str) -> None: ...

    def tick(self) -> None: ...

    def end(self) -> None: ...


class DominusPgBench:
    def __init__(self, server: PgServer, workdir: Path, bin_dir: Path) -> None:
        self.server = server
        self.workdir = workdir
        self.dominus = bin_dir / "dominus"
        self.template = server.create("dominus_template")
        self.prefilled: str | None = None
        self._runs = 0
        subprocess.run(
            [self.dominus, "db", "upgrade"],
            env=self._env(self.template),
            cwd=workdir,
            check=True,
            capture_output=True,
        )

    # --- plumbing ------------------------------------------------------------------------
    def _env(self, database: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DATABASE_URL=self.server.sqlalchemy_url(database),
            DOMINUS_LOG_LEVEL="WARNING",
            PYTHONFAULTHANDLER="1",
        )
        return env

    def _fresh(self, source: str | None = None) -> str:
        self._runs += 1
        return self.server.create(
            f"dominus_{self._runs}", source or self.template, file_copy=source is not None
        )

    def _log(self, name: str) -> Path:
        return self.workdir / f"dominus-pg-{self._runs}-{name}.log"

    def _queue(self, database: str) -> tuple[Engine, JobQueue]:
        """A JobQueue as `dominus` builds one on PostgreSQL (the server's clock)."""
        engine = create_database_engine(self.server.sqlalchemy_url(database))
        queue = JobQueue(
            SqlJobStore(engine), build_registry(diagnostic_jobs=True), clock=DatabaseClock(engine)
        )
        return engine, queue

    def settings(self) -> str:
        return (
            "enqueues commit synchronously (server default synchronous_commit=on); the worker's "
            "complete-and-claim transaction sets synchronous_commit=off for itself (ADR 0005)"
        )

    def _fill(self, database: str, jobs: int, run_at: datetime | None = None) -> int:
        """Enqueue `jobs` diag.noop jobs (untimed), then VACUUM (ANALYZE); returns the highest
        id before them."""
        base = int(self.server.query(database, "SELECT coalesce(max(id), 0) FROM job_queue")[0][0])
        engine, queue = self._queue(database)
        try:
            for start in range(0, jobs, FILL_BATCH):
                count = min(FILL_BATCH, jobs - start)
                queue.enqueue_jobs([EnqueueRequest(NOOP, run_at=run_at)] * count)
        finally:
            engine.dispose()
        self.server.vacuum_analyze(database)
        return base

    # --- enqueue -------------------------------------------------------------------------
    def enqueue_single(self, jobs: int, warmup: int) -> float:
        database = self._fresh()
        engine, queue = self._queue(database)
        try:
            for _ in range(warmup):
                queue.enqueue_job(NOOP)
            started = time.perf_counter()
            for _ in range(jobs):
                queue.enqueue_job(NOOP)
            elapsed = time.perf_counter() - started
        finally:
            engine.dispose()
            self.server.drop(database)
        return jobs / elapsed

    def enqueue_batched(self, jobs: int, batch_size: int) -> float:
        database = self._fresh()
        engine, queue = self._queue(database)
        batch = [EnqueueRequest(NOOP)] * batch_size
        try:
            queue.enqueue_jobs(batch)  # warm-up
            started = time.perf_counter()
            for _ in range(jobs // batch_size):
                queue.enqueue_jobs(batch)
            elapsed = time.perf_counter() - started
        finally:
            engine.dispose()
            self.server.drop(database)
        return (jobs // batch_size) * batch_size / elapsed

    # --- drain ---------------------------------------------------------------------------
    def drain(self, jobs: int, concurrency: int, *, prefilled: bool = False) -> Drain:
        """One burst worker at `concurrency` drains `jobs` pending jobs."""
        database = self._fresh(self.prefilled if prefilled else None)
        log = self._log(f"drain-c{concurrency}")
        worker: subprocess.Popen[bytes] | None = None
        try:
            base = self._fill(database, jobs)
            command = [str(self.dominus), "worker", "--diagnostic-jobs", "--burst"]
            command += ["--concurrency", str(concurrency)]
            sampler = CpuSampler(self.server)
            started = time.perf_counter()
            worker = start_logged(command, env=self._env(database), cwd=self.workdir, log=log)
            sampler.pids = [worker.pid]
            sampler.sample(force=True)
            try:
                codes, _ = wait_all([worker], timeout=60 + jobs / 100, on_tick=sampler.sample)
            except TimeoutError:
                raise RuntimeError(self._hung([worker], database, base, [log])) from None
            wall = time.perf_counter() - started
            sampler.sample(force=True)
            if codes[0] != 0:
                raise RuntimeError(f"dominus worker exited with {codes[0]}:\n{tail(log)}")
            span = self._span(database, base, jobs, [log])
            cpu = sampler.window(*self._window(database, base))
            return Drain(
                jobs=jobs,
                throughput=jobs / span,
                wall_seconds=wall,
                worker_cpu_seconds=cpu[0] if cpu else None,
                db_cpu_seconds=cpu[1] if cpu else None,
                cpu_span_seconds=cpu[2] if cpu else None,
            )
        finally:
            if worker is not None:
                stop_process(worker)
            self.server.drop(database)

    def _window(self, database: str, base: int) -> tuple[float, float]:
        """Epoch seconds of the first job start and the last job end."""
        row = self.server.query(
            database,
            "SELECT extract(epoch FROM min(started_at)), extract(epoch FROM max(finished_at))"
            " FROM job_queue WHERE id > %s",
            (base,),
        )[0]
        return float(row[0]), float(row[1])

    def drain_warm(
        self,
        jobs: int,
        concurrency: int,
        processes: int,
        observer: DrainObserver | None = None,
    ) -> Drain:
        """`processes` workers (not in burst mode) are started first and left idle; the jobs,
        enqueued beforehand with a run_at a day ahead and vacuumed, then become due at once
        (one transaction: UPDATE run_at = created_at, and NOTIFY as an enqueue sends). So the
        interpreters' start-up (~1 s of CPU each) does not overlap the drain, which on a
        2-core machine would otherwise count against 2 and 4 processes. Wall time and CPU
        cover the drain only: from that commit until no job is pending or running."""
        database = self._fresh()
        later = datetime.now(UTC) + timedelta(days=1)
        logs = [self._log(f"warm-c{concurrency}-p{index}") for index in range(processes)]
        workers: list[subprocess.Popen[bytes]] = []
        try:
            base = self._fill(database, jobs, run_at=later)
            command = [str(self.dominus), "worker", "--diagnostic-jobs"]
            command += ["--concurrency", str(concurrency)]
            for log in logs:
                env = self._env(database)
                workers.append(start_logged(command, env=env, cwd=self.workdir, log=log))

            def check_running() -> None:
                for worker, log in zip(workers, logs, strict=True):
                    ensure_running(worker, "dominus worker", log)

            def registered() -> bool:
                check_running()
                sql = "SELECT count(*) FROM workers WHERE stopped_at IS NULL"
                return bool(self.server.query(database, sql)[0][0] >= processes)

            wait_for(registered, timeout=60, interval=0.02, what="the workers to register")
            time.sleep(IDLE_BEFORE_LATENCY_SECONDS)
            with self.server.connect(database) as connection:
                worker_cpu = sum(process_cpu_seconds(worker.pid) for worker in workers)
                db_cpu = self.server.cpu_seconds()
                if observer is not None:
                    observer.begin(database)
                started = time.perf_counter()
                with connection.transaction():
                    connection.execute(
                        "UPDATE job_queue SET run_at = created_at WHERE id > %s", (base,)
                    )
                    connection.execute("SELECT pg_notify(%s, '')", (JOBS_CHANNEL,))

                def drained() -> bool:
                    check_running()
                    if observer is not None:
                        observer.tick()
                    row = connection.execute(
                        "SELECT EXISTS (SELECT FROM job_queue WHERE status IN "
                        "('pending', 'running') AND id > %s)",
                        (base,),
                    ).fetchone()
                    return not (row and row[0])

                wait_for(drained, timeout=60 + jobs / 100, interval=0.01, what="the drain")
                wall = time.perf_counter() - started
                worker_cpu = sum(process_cpu_seconds(w.pid) for w in workers) - worker_cpu
                db_cpu = self.server.cpu_since(db_cpu)
                if observer is not None:
                    observer.end()
            codes = [stop_process(worker) for worker in workers]
            if any(codes):
                raise RuntimeError(
                    f"dominus worker exit codes {codes} after SIGTERM:\n"
                    + "\n".join(tail(log) for log in logs)
                )
            return Drain(
                jobs=jobs,
                throughput=jobs / self._span(database, base, jobs, logs),
                wall_seconds=wall,
                worker_cpu_seconds=worker_cpu,
                db_cpu_seconds=db_cpu,
                cpu_span_seconds=wall,
            )
        finally:
            for worker in workers:
                stop_process(worker)
            self.server.drop(database)

    def _span(self, database: str, base: int, jobs: int, logs: list[Path]) -> float:
        """max(finished_at) − min(started_at) of the drained jobs, checking that all of them
        completed."""
        rows = self.server.query(
            database,
            "SELECT status, count(*), extract(epoch FROM max(finished_at) - min(started_at))"
            " FROM job_queue WHERE id > %s GROUP BY status",
            (base,),
        )
        by_status = {status: (count, span) for status, count, span in rows}
        done, span = by_status.get("completed", (0, None))
        if done != jobs or not span:
            counts = {status: values[0] for status, values in by_status.items()}
            raise RuntimeError(
                f"the workers drained only {done} of {jobs} jobs (by status: {counts}); "
                "worker logs:\n" + "\n".join(tail(log) for log in logs)
            )
        return float(span)

    def _hung(
        self, workers: list[subprocess.Popen[bytes]], database: str, base: int, logs: list[Path]
    ) -> str:
        """Burst workers that did not exit: dump their threads (PYTHONFAULTHANDLER makes
        SIGABRT print every thread's stack), keep their logs under bench/out/, describe the
        database."""
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGABRT)
        for worker in workers:
            try:
                worker.wait(10)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        statuses = self.server.query(
            database,
            "SELECT status, count(*) FROM job_queue WHERE id > %s GROUP BY status",
            (base,),
        )
        registered = self.server.query(
            database, "SELECT id, started_at, last_seen_at, stopped_at FROM workers"
        )
        OUT_DIR.mkdir(exist_ok=True)
        kept = []
        for log in logs:
            target = OUT_DIR / f"hung-{datetime.now():%Y%m%d-%H%M%S}-{log.name}"
            shutil.copyfile(log, target)
            kept.append(str(target))
        return (
            f"burst worker(s) still running after the timeout; jobs by status {dict(statuses)}; "
            f"workers {registered}; logs kept as {kept}; end of the first:\n{tail(logs[0], 60)}"
        )

    def build_prefilled(self, rows: int) -> float:
        """A migrated database holding `rows` completed jobs, inserted with one INSERT ...
        SELECT and vacuumed; each prefilled drain runs on a copy. Returns the seconds it
        took."""
        started = time.perf_counter()
        database = self.server.create("dominus_prefilled", self.template)
        self.prefilled = database
        with self.server.connect(database) as connection:
            connection.execute(_PREFILL, {"rows": rows})
            connection.execute("VACUUM (ANALYZE)")
        count = self.server.query(
            database, "SELECT count(*) FROM job_queue WHERE status = 'completed'"
        )[0][0]
        if count != rows:
            raise RuntimeError(f"prefill inserted {count} rows, expected {rows}")
        return time.perf_counter() - started

    def drop_prefilled(self) -> None:
        if self.prefilled is not None:
            self.server.drop(self.prefilled)
            self.prefilled = None

    # --- pickup latency ------------------------------------------------------------------
    def latency(self, jobs: int, seed: int) -> list[float]:
        """Enqueue→start latencies (ms) with an idle worker at the default poll interval (it
        is woken by NOTIFY)."""
        database = self._fresh()
        log = self._log("latency")
        engine: Engine | None = None
        command = [self.dominus, "worker", "--diagnostic-jobs"]
        command += ["--concurrency", str(LATENCY_CONCURRENCY)]
        worker = start_logged(command, env=self._env(database), cwd=self.workdir, log=log)
        try:

            def registered() -> bool:
                ensure_running(worker, "dominus worker", log)
                sql = "SELECT count(*) FROM workers WHERE stopped_at IS NULL"
                return bool(self.server.query(database, sql)[0][0])

            wait_for(registered, timeout=60, interval=0.02, what="the worker to register")
            time.sleep(IDLE_BEFORE_LATENCY_SECONDS)
            engine, queue = self._queue(database)
            rng = random.Random(seed)
            ids = []
            for _ in range(jobs):
                ids.append(queue.enqueue_job(NOOP).job_id)
                time.sleep(rng.uniform(*LATENCY_GAP_SECONDS))
            sql = "SELECT count(*) FROM job_queue WHERE id >= %s AND status = 'completed'"
            wait_for(
                lambda: self.server.query(database, sql, (ids[0],))[0][0] >= jobs,
                timeout=60,
                interval=0.05,
                what="the latency jobs to complete",
            )
            rows = self.server.query(
                database,
                "SELECT extract(epoch FROM started_at - created_at) * 1000 FROM job_queue"
                " WHERE id >= %s",
                (ids[0],),
            )
            ensure_running(worker, "dominus worker", log)
        finally:
            stop_process(worker)
            if engine is not None:
                engine.dispose()
            self.server.drop(database)
        return [float(row[0]) for row in rows]
