"""DOMINUS measurements on SQLite: enqueue through the Python API in this process; drains and
pickup latency with a real `dominus worker` process. Every run gets a fresh database file,
copied from one migrated with `dominus db upgrade`."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from common import (
    IDLE_BEFORE_LATENCY_SECONDS,
    LATENCY_CONCURRENCY,
    LATENCY_GAP_SECONDS,
    Drain,
    ensure_running,
    remove_db,
    start_logged,
    stop_process,
    tail,
    wait_for,
)
from dominus.db.engine import create_database_engine
from dominus.handlers import build_registry
from dominus.jobs import EnqueueRequest, JobQueue, SqlJobStore
from dominus.jobs.metrics_model import ENQUEUED_COUNTED_THROUGH

NOOP = "diag.noop"
OUT_DIR = Path(__file__).resolve().parent / "out"
FILL_BATCH = 1_000

_PREFILL_INSERT = """
    INSERT INTO job_queue (job_type, payload, status, priority, attempts, max_attempts,
        failure_count, run_at, created_at, updated_at, started_at, finished_at, heartbeat_at,
        locked_by, result)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# The rows above are old history: an existing database counted them in `enqueued` long ago.
_MARK_COUNTED = (
    "INSERT INTO job_metrics (name, job_type, bucket, shard, value) "
    f"SELECT '{ENQUEUED_COUNTED_THROUGH}', '', '', 0, max(id) FROM job_queue WHERE true "
    "ON CONFLICT (name, job_type, bucket, shard) DO UPDATE SET value = excluded.value"
)


def _timestamp(value: str) -> datetime:
    """A job_queue timestamp as stored on SQLite: naive UTC ISO text."""
    return datetime.fromisoformat(value)


def _query(db: Path, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(db)
    try:
        return connection.execute(sql, parameters).fetchall()
    finally:
        connection.close()


class DominusBench:
    def __init__(self, workdir: Path, bin_dir: Path) -> None:
        self.workdir = workdir
        self.dominus = bin_dir / "dominus"
        self.template = workdir / "dominus-template.db"
        self.prefilled: Path | None = None
        self._runs = 0
        subprocess.run(
            [self.dominus, "db", "upgrade"],
            env=self._env(self.template),
            cwd=workdir,
            check=True,
            capture_output=True,
        )

    # --- plumbing ------------------------------------------------------------------------
    @staticmethod
    def _env(db: Path) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            DATABASE_URL=f"sqlite:///{db}", DOMINUS_LOG_LEVEL="WARNING", PYTHONFAULTHANDLER="1"
        )
        return env

    def _fresh(self, source: Path | None = None) -> Path:
        self._runs += 1
        path = self.workdir / f"dominus-{self._runs}.db"
        shutil.copyfile(source or self.template, path)
        return path

    def _log(self, name: str) -> Path:
        return self.workdir / f"dominus-{self._runs}-{name}.log"

    @staticmethod
    def _queue(db: Path) -> tuple[Engine, JobQueue]:
        engine = create_database_engine(f"sqlite:///{db}")
        return engine, JobQueue(SqlJobStore(engine), build_registry(diagnostic_jobs=True))

    def settings(self) -> str:
        """The pragmas DOMINUS's engine sets on its connections, as read back."""
        db = self._fresh()
        engine, _ = self._queue(db)
        try:
            raw = engine.raw_connection()
            try:
                cursor = raw.cursor()
                journal = cursor.execute("PRAGMA journal_mode").fetchone()[0]
                synchronous = cursor.execute("PRAGMA synchronous").fetchone()[0]
            finally:
                raw.close()
        finally:
            engine.dispose()
            remove_db(db)
        names = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
        return f"journal_mode={journal}, synchronous={names.get(synchronous, synchronous)}"

    def _fill(self, db: Path, jobs: int, job_type: str = NOOP) -> int:
        """Enqueue `jobs` no-op jobs (untimed); returns the highest id before them."""
        base = int(_query(db, "SELECT coalesce(max(id), 0) FROM job_queue")[0][0])
        engine, queue = self._queue(db)
        try:
            for start in range(0, jobs, FILL_BATCH):
                count = min(FILL_BATCH, jobs - start)
                queue.enqueue_jobs([EnqueueRequest(job_type)] * count)
        finally:
            engine.dispose()
        return base

    # --- enqueue -------------------------------------------------------------------------
    def enqueue_single(self, jobs: int, warmup: int) -> float:
        db = self._fresh()
        engine, queue = self._queue(db)
        try:
            for _ in range(warmup):
                queue.enqueue_job(NOOP)
            started = time.perf_counter()
            for _ in range(jobs):
                queue.enqueue_job(NOOP)
            elapsed = time.perf_counter() - started
        finally:
            engine.dispose()
            remove_db(db)
        return jobs / elapsed

    def enqueue_batched(self, jobs: int, batch_size: int) -> float:
        db = self._fresh()
        engine, queue = self._queue(db)
        batch = [EnqueueRequest(NOOP)] * batch_size
        try:
            queue.enqueue_jobs(batch)  # warm-up
            started = time.perf_counter()
            for _ in range(jobs // batch_size):
                queue.enqueue_jobs(batch)
            elapsed = time.perf_counter() - started
        finally:
            engine.dispose()
            remove_db(db)
        return (jobs // batch_size) * batch_size / elapsed

    # --- drain ---------------------------------------------------------------------------
    def drain(
        self, jobs: int, concurrency: int, *, prefilled: bool = False, job_type: str = NOOP
    ) -> Drain:
        """`jobs` jobs of `job_type` (diag.noop; diag.async_noop for the async handler's drain)
        drained by one burst worker process."""
        db = self._fresh(self.prefilled if prefilled else None)
        log = self._log(f"drain-c{concurrency}")
        try:
            base = self._fill(db, jobs, job_type)
            command = [
                self.dominus,
                "worker",
                "--diagnostic-jobs",
                "--burst",
                "--concurrency",
                str(concurrency),
            ]
            started = time.perf_counter()
            worker = start_logged(command, env=self._env(db), cwd=self.workdir, log=log)
            try:
                returncode = worker.wait(timeout=30 + jobs / 200)
            except subprocess.TimeoutExpired:
                raise RuntimeError(self._hung(worker, db, base, log)) from None
            wall = time.perf_counter() - started
            if returncode != 0:
                raise RuntimeError(f"dominus worker exited with {returncode}:\n{tail(log)}")
            rows = _query(
                db,
                "SELECT status, count(*), min(started_at), max(finished_at) FROM job_queue"
                " WHERE id > ? GROUP BY status",
                (base,),
            )
            by_status = {status: (count, first, last) for status, count, first, last in rows}
            done, first, last = by_status.get("completed", (0, None, None))
            if done != jobs or first is None or last is None:
                counts = {status: values[0] for status, values in by_status.items()}
                raise RuntimeError(
                    f"burst worker exited 0 but only {done} of {jobs} jobs completed "
                    f"(by status: {counts}); worker log:\n{log.read_text()}"
                )
            span = (_timestamp(last) - _timestamp(first)).total_seconds()
            return Drain(jobs=jobs, throughput=jobs / span, wall_seconds=wall)
        finally:
            remove_db(db)

    def _hung(self, worker: subprocess.Popen[bytes], db: Path, base: int, log: Path) -> str:
        """A burst worker that did not exit: dump its threads (PYTHONFAULTHANDLER makes SIGABRT
        print every thread's stack), keep its log under bench/out/, describe the database."""
        worker.send_signal(signal.SIGABRT)
        try:
            worker.wait(10)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        statuses = _query(
            db, "SELECT status, count(*) FROM job_queue WHERE id > ? GROUP BY status", (base,)
        )
        workers = _query(db, "SELECT id, started_at, last_seen_at, stopped_at FROM workers")
        OUT_DIR.mkdir(exist_ok=True)
        kept = OUT_DIR / f"hung-{datetime.now():%Y%m%d-%H%M%S}-{log.name}"
        shutil.copyfile(log, kept)
        return (
            f"burst worker still running after its timeout; jobs by status {dict(statuses)}; "
            f"workers {workers}; log kept as {kept}; its end:\n{tail(log, 60)}"
        )

    def build_prefilled(self, rows: int) -> float:
        """A migrated database holding `rows` completed jobs, inserted with raw sqlite3; each
        prefilled drain runs on a copy. Returns the seconds it took."""
        started = time.perf_counter()
        path = self.workdir / "dominus-prefilled.db"
        shutil.copyfile(self.template, path)
        first = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=30)
        step = timedelta(days=30) / rows

        def generate() -> Any:
            for index in range(rows):
                created = first + step * index
                text = created.isoformat(" ", "microseconds")
                began = (created + timedelta(milliseconds=1)).isoformat(" ", "microseconds")
                ended = (created + timedelta(milliseconds=2)).isoformat(" ", "microseconds")
                yield (
                    *(NOOP, "{}", "completed", 0, 1, 3, 0),
                    *(text, text, ended, began, ended, began),
                    *("prefill:1:000000", "{}"),
                )

        connection = sqlite3.connect(path)
        try:
            connection.execute("PRAGMA synchronous=OFF")
            with connection:
                connection.executemany(_PREFILL_INSERT, generate())
                # History, as a real database would hold it: counted long ago (ADR 0036).
                connection.execute(_MARK_COUNTED)
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            connection.close()
        count = _query(path, "SELECT count(*) FROM job_queue WHERE status = 'completed'")[0][0]
        if count != rows:
            raise RuntimeError(f"prefill inserted {count} rows, expected {rows}")
        self.prefilled = path
        return time.perf_counter() - started

    def drop_prefilled(self) -> None:
        if self.prefilled is not None:
            remove_db(self.prefilled)
            self.prefilled = None

    # --- pickup latency ------------------------------------------------------------------
    def latency(self, jobs: int, seed: int) -> list[float]:
        """Enqueue→start latencies (ms) with an idle worker at the default poll interval."""
        db = self._fresh()
        log = self._log("latency")
        engine: Engine | None = None
        command = [self.dominus, "worker", "--diagnostic-jobs"]
        command += ["--concurrency", str(LATENCY_CONCURRENCY)]
        worker = start_logged(command, env=self._env(db), cwd=self.workdir, log=log)
        try:

            def registered() -> bool:
                ensure_running(worker, "dominus worker", log)
                sql = "SELECT count(*) FROM workers WHERE stopped_at IS NULL"
                return bool(_query(db, sql)[0][0])

            wait_for(registered, timeout=60, interval=0.02, what="the worker to register")
            time.sleep(IDLE_BEFORE_LATENCY_SECONDS)
            engine, queue = self._queue(db)
            rng = random.Random(seed)
            ids = []
            for _ in range(jobs):
                ids.append(queue.enqueue_job(NOOP).job_id)
                time.sleep(rng.uniform(*LATENCY_GAP_SECONDS))
            sql = "SELECT count(*) FROM job_queue WHERE id >= ? AND status = 'completed'"
            wait_for(
                lambda: _query(db, sql, (ids[0],))[0][0] >= jobs,
                timeout=60,
                interval=0.05,
                what="the latency jobs to complete",
            )
            rows = _query(
                db, "SELECT created_at, started_at FROM job_queue WHERE id >= ?", (ids[0],)
            )
        finally:
            stop_process(worker)
            if engine is not None:
                engine.dispose()
            remove_db(db)
        return [
            (_timestamp(started) - _timestamp(created)).total_seconds() * 1000
            for created, started in rows
        ]
