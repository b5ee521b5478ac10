#!/usr/bin/env python3
"""Chaos harness: N worker processes drain jobs while a driver, for a bounded time, SIGKILLs
random workers and restarts them, and troubles the database: on PostgreSQL (a throwaway
`initdb` cluster of its own) it restarts the server twice (once in immediate mode, a crash, once
in fast mode) and terminates worker backends with pg_terminate_backend; on SQLite it holds the
write lock from another process for seconds at a time. Every execution is recorded outside the
database by the handler (bench/chaos/chaos_worker.py), and bench/chaos/analysis.py says what
was lost, overlapped or run twice.

    .venv/bin/python bench/chaos/chaos.py --backend sqlite --jobs 20000
    .venv/bin/python bench/chaos/chaos.py --backend postgresql --jobs 20000
    .venv/bin/python bench/chaos/chaos.py --backend sqlite --smoke     (300 jobs, ~30 s)
    .venv/bin/python bench/chaos/chaos.py --backend sqlite --jobs 2000 --keys

`--keys` enqueues every second job with a concurrency key (ADR 0052) of KEY_LIMITS and has
every third job ask the shared rate limiter RATE_KEY (ADR 0053) before its simulated outside
call; bench/chaos/keys_analysis.py then says whether a key ever ran above its limit, whether a
slot leaked, and whether the limiter ever granted above its limit in a window of its period.

Writes report.json (and the logs) into --out (default: a new directory under /tmp) and prints
a markdown table row. Run from the repository root with the project's virtualenv. PostgreSQL
needs its server binaries (DOMINUS_TEST_POSTGRES_BIN, default /usr/lib/postgresql/15/bin).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import select

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE), str(ROOT)]

from analysis import (  # noqa: E402
    analyse,
    percentile,
    read_executions,
    reclaim_delays,
    reclaims_of_live_workers,
    reclaims_with_a_worker_up,
)
from chaos_worker import JOB_TYPE, ChaosJob, chaos_registry  # noqa: E402
from keys_analysis import analyse_keys, read_grants  # noqa: E402

from dominus.db.engine import create_database_engine  # noqa: E402
from dominus.jobs import EnqueueRequest, JobQueue, SqlJobStore  # noqa: E402
from dominus.jobs.clock import utc_now  # noqa: E402
from dominus.schema.migrate import upgrade  # noqa: E402
from dominus.schema.tables import job_events, job_queue  # noqa: E402

WORKER_SCRIPT = HERE / "chaos_worker.py"
RESTART_DELAY = 1.0  # seconds before a worker that exited by itself is started again
# With --keys: the concurrency keys and their limits, a key per job in turn over every second
# job; small limits, so the keys are full most of the run and kills land on held slots.
KEY_LIMITS = {"chaos:one": 1, "chaos:two": 2, "chaos:three": 3, "chaos:five": 5}
# ... and the shared limiter every third job asks, set by the workers' RATE_LIMITS.
RATE_KEY, RATE_COUNT, RATE_PERIOD = "chaos:limited", 20, 1.0


@dataclass
class Config:
    backend: str
    jobs: int = 20_000
    workers: int = 4
    concurrency: int = 4
    chaos_seconds: float = 300.0  # chaos stops then, or earlier when every job has ended
    drain_timeout: float = 600.0  # after the chaos, how long the workers get to finish
    kill_every: tuple[float, float] = (2.0, 5.0)
    terminate_every: tuple[float, float] = (3.0, 6.0)  # PostgreSQL: pg_terminate_backend
    lock_every: tuple[float, float] = (8.0, 15.0)  # SQLite: hold the write lock...
    lock_for: tuple[float, float] = (2.0, 5.0)  # ... this long
    server_down: float = 2.0  # PostgreSQL: seconds between stop and start
    job_seconds: tuple[float, float] = (0.05, 0.25)
    max_running_age_ms: int = 3000
    heartbeat_ms: int = 500
    poll_ms: int = 200
    retry_base_ms: int = 50
    retry_max_ms: int = 400
    seed: int = 1
    keys: bool = False  # concurrency keys and a shared rate limiter on a share of the jobs
    log_level: str = "WARNING"  # the workers' DOMINUS_LOG_LEVEL (INFO logs every job)
    out: Path | None = None

    def worker_env(self, database_url: str, events: Path) -> dict[str, str]:
        return {
            "RATE_LIMITS": f"{RATE_KEY}={RATE_COUNT}/{RATE_PERIOD:g}s" if self.keys else "",
            "DATABASE_URL": database_url,
            "CHAOS_EVENTS_DIR": str(events),
            "WORKER_CONCURRENCY": str(self.concurrency),
            "JOB_QUEUE_POLL_INTERVAL_MS": str(self.poll_ms),
            "JOB_HEARTBEAT_INTERVAL_MS": str(self.heartbeat_ms),
            "JOB_MAX_RUNNING_AGE_MS": str(self.max_running_age_ms),
            "JOB_RETRY_BASE_MS": str(self.retry_base_ms),
            "JOB_RETRY_MAX_MS": str(self.retry_max_ms),
            "WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS": "10000",
            "WORKER_SHUTDOWN_REQUEUE": "false",
            "DOMINUS_LOG_LEVEL": self.log_level,
        }

    def recovery_bound(self) -> float:
        """Max running age + reclaim interval + the longest retry delay + one poll: how long a
        killed worker's job waits for its next start when the database is well."""
        age = self.max_running_age_ms / 1000
        reclaim = max(self.heartbeat_ms / 1000, age / 10)
        return age + reclaim + self.retry_max_ms / 1000 + self.poll_ms / 1000


def with_default_timings(config: Config) -> Config:
    """The seed's liveness and polling defaults (a 5-minute max running age, a 15 s heartbeat,
    a 5 s poll, retries from 1 s): what a user runs, where only a dead worker's free liveness
    lock (ADR 0037) can bring a killed worker's job back within seconds."""
    config.max_running_age_ms = 300_000
    config.heartbeat_ms = 15_000
    config.poll_ms = 5_000
    config.retry_base_ms = 1_000
    config.retry_max_ms = 600_000
    return config


def smoke_config(backend: str) -> Config:
    return Config(
        backend=backend,
        jobs=300,
        workers=3,
        concurrency=3,
        chaos_seconds=25.0,
        drain_timeout=120.0,
        kill_every=(2.0, 4.0),
        terminate_every=(2.0, 4.0),
        lock_every=(4.0, 6.0),
        lock_for=(1.0, 3.0),
        server_down=1.0,
        # Long enough that the drain spans the chaos: kills land on busy workers.
        job_seconds=(0.3, 0.9),
        # A live worker silent this long is reclaimed, by design. The write lock is held for up
        # to 3 s here, and a worker held up by it is silent for the hold plus up to a heartbeat
        # interval: with the full run's 3 s, a reaper whose pass began just after a hold (never
        # held up itself, so seeing no trouble) could take a live worker's job before that
        # worker's waiting heartbeat got in, and the verdict would count the rerun as
        # unexplained (ADR 0026's assumption: the max age exceeds the longest stall plus a
        # heartbeat). Killed workers' jobs still come back through their free liveness locks
        # within seconds.
        max_running_age_ms=6000,
    )


@dataclass
class Log:
    """What the driver did, with wall-clock times (the handlers' clock)."""

    kills: dict[int, float] = field(default_factory=dict)  # pid -> SIGKILL time
    restarts: int = 0  # worker processes started again after a kill
    # Workers that exited by themselves (a worker started while the server is down cannot
    # open its database and exits 1) and were started again, as a supervisor would.
    exits: list[dict[str, Any]] = field(default_factory=list)
    server_restarts: list[dict[str, Any]] = field(default_factory=list)
    terminated_backends: int = 0
    locks: list[tuple[float, float]] = field(default_factory=list)  # SQLite write lock held
    trouble: list[tuple[float, float]] = field(default_factory=list)  # database chaos windows


class Workers:
    def __init__(self, config: Config, database_url: str, directory: Path) -> None:
        self.config = config
        self.directory = directory
        self.events = directory / "events"
        self.events.mkdir()
        self.env = (
            {k: v for k, v in os.environ.items() if not k.startswith(("DOMINUS_", "JOB_"))}
            | config.worker_env(database_url, self.events)
            | {"PYTHONPATH": str(ROOT / "src")}
        )
        self.processes: list[subprocess.Popen[bytes]] = []
        self.started = 0
        self.killed: set[int] = set()
        self.exited: dict[int, float] = {}  # pid -> when it was seen gone (restart pending)

    def start(self) -> subprocess.Popen[bytes]:
        self.started += 1
        log = (self.directory / f"worker-{self.started:04d}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, str(WORKER_SCRIPT)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=self.env,
            cwd=self.directory,
        )
        log.close()
        self.processes.append(process)
        return process

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [process for process in self.processes if process.poll() is None]

    def working(self) -> list[subprocess.Popen[bytes]]:
        """Live workers that have run a job (a worker takes seconds to start on a busy
        machine; killing one before it has claimed anything would test nothing)."""
        return [
            process
            for process in self.alive()
            if (self.events / f"events-{process.pid}.jsonl").exists()
        ]

    def kill_one(self, rng: random.Random, log: Log) -> None:
        working = self.working()
        if not working:
            return
        victim = rng.choice(working)
        self.killed.add(victim.pid)
        victim.send_signal(signal.SIGKILL)
        log.kills[victim.pid] = time.time()
        victim.wait(30)
        self.start()
        log.restarts += 1

    def supervise(self, log: Log) -> None:
        """Start again, after RESTART_DELAY, every worker that exited without being killed,
        as a process supervisor (systemd's Restart=always) does: without it, each worker
        started during a server restart is lost for the rest of the run."""
        now = time.monotonic()
        for process in self.processes:
            if process.pid in self.killed or process.returncode is not None:
                continue
            code = process.poll()
            if code is not None:
                self.exited[process.pid] = now
                log.exits.append({"pid": process.pid, "code": code, "at": time.time()})
        for pid, seen in list(self.exited.items()):
            if now - seen >= RESTART_DELAY:
                del self.exited[pid]
                self.start()

    def stop_all(self, timeout: float = 60) -> list[int]:
        """SIGTERM every worker and wait; SIGKILL (and return) those still running after
        `timeout`."""
        for process in self.alive():
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        leftovers = []
        for process in self.processes:
            remaining = max(0.1, deadline - time.monotonic())
            try:
                process.wait(remaining)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)
                leftovers.append(process.pid)
        return leftovers


class Database:
    """The database under test and its chaos: a SQLite file, or a throwaway PostgreSQL."""

    def __init__(self, config: Config, directory: Path) -> None:
        self.config = config
        self.directory = directory
        self.server: Any = None
        if config.backend == "sqlite":
            self.url = f"sqlite:///{directory / 'chaos.db'}"
        else:
            from tests.support.throwaway_postgres import ThrowawayPostgres  # noqa: PLC0415

            self.server = ThrowawayPostgres()
            self.server.init()
            self.server.start()
            self.url = self.server.create_database("chaos")
        self.engine = create_database_engine(self.url)
        upgrade(self.engine)
        self.store = SqlJobStore(self.engine)

    def enqueue(self, count: int) -> list[int]:
        queue = JobQueue(self.store, chaos_registry(None))  # type: ignore[arg-type]
        low, high = self.config.job_seconds
        ids: list[int] = []
        for first in range(0, count, 1000):
            requests = [self._request(n, low, high) for n in range(first, min(count, first + 1000))]
            ids.extend(result.job_id for result in queue.enqueue_jobs(requests))
        return ids

    def _request(self, n: int, low: float, high: float) -> EnqueueRequest:
        key = concurrency_key(n) if self.config.keys else None
        rate_key = RATE_KEY if self.config.keys and asks_limiter(n) else None
        return EnqueueRequest(
            JOB_TYPE,
            ChaosJob(n=n, min_seconds=low, max_seconds=high, rate_key=rate_key),
            max_attempts=25,
            concurrency_key=key,
            concurrency_limit=KEY_LIMITS[key] if key is not None else None,
        )

    def job_keys(self) -> dict[int, tuple[str, int]]:
        """Job id -> (concurrency key, limit) of every keyed job, as the rows hold them."""
        columns = (job_queue.c.id, job_queue.c.concurrency_key, job_queue.c.concurrency_limit)
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(*columns).where(job_queue.c.concurrency_key.is_not(None))
            )
            return {row.id: (row.concurrency_key, row.concurrency_limit) for row in rows}

    def active(self) -> int:
        """Pending + running jobs (None-safe while the database is troubled)."""
        stats = self.store.queue_stats(_now(), alive_since=_now())
        return stats.by_status.get("pending", 0) + stats.by_status.get("running", 0)

    def statuses(self) -> dict[int, str]:
        with self.engine.connect() as connection:
            rows = connection.execute(select(job_queue.c.id, job_queue.c.status))
            return {row.id: row.status for row in rows}

    def reclaimed_at(self) -> dict[tuple[int, int], float]:
        """(job, attempt) -> when a reaper took that attempt back (its `reclaimed` event)."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(job_events.c.job_id, job_events.c.attempt, job_events.c.at).where(
                    job_events.c.kind == "reclaimed"
                )
            )
            return {(row.job_id, row.attempt): row.at.timestamp() for row in rows}

    # --- PostgreSQL chaos --------------------------------------------------------------------
    def restart_server(self, mode: str, log: Log) -> None:
        self.engine.dispose()
        stopping = time.time()
        self.server.stop(mode)
        # `down` when the stop returned: until then the server may still take (and lose) a
        # claim, which the analysis must not count as a duplicate made while it was down.
        down = time.time()
        time.sleep(self.config.server_down)
        self.server.start()
        up = time.time()
        log.server_restarts.append({"mode": mode, "stopping": stopping, "down": down, "up": up})
        log.trouble.append((stopping, up))

    def terminate_backends(self, rng: random.Random, log: Log) -> None:
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(self.server.conninfo("postgres"), autocommit=True) as admin,
        ):
            pids = [
                row[0]
                for row in admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = 'chaos' "
                    "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
                )
            ]
            victims = rng.sample(pids, min(len(pids), rng.randint(1, 3)))
            for pid in victims:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            now = time.time()
            log.terminated_backends += len(victims)
            if victims:
                log.trouble.append((now, now))

    # --- SQLite chaos ------------------------------------------------------------------------
    def hold_write_lock(self, seconds: float) -> subprocess.Popen[bytes]:
        """Another process takes SQLite's write lock (BEGIN IMMEDIATE) and keeps it."""
        path = str(self.directory / "chaos.db")
        code = (
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\n"
            "print(time.time(), flush=True)\n"
            "time.sleep(float(sys.argv[2]))\n"
            "c.execute('COMMIT')\n"
            "print(time.time(), flush=True)\n"
        )
        return subprocess.Popen(
            [sys.executable, "-c", code, path, str(seconds)], stdout=subprocess.PIPE
        )

    def close(self) -> None:
        self.engine.dispose()
        if self.server is not None:
            self.server.destroy()


def _now() -> Any:
    return utc_now()


def concurrency_key(n: int) -> str | None:
    """The key of the n-th job with --keys: every second job, the keys in turn."""
    if n % 2:
        return None
    names = list(KEY_LIMITS)
    return names[(n // 2) % len(names)]


def asks_limiter(n: int) -> bool:
    """Every third job asks the shared limiter (keyed or not)."""
    return n % 3 == 0


def _active_or_none(database: Database) -> int | None:
    try:
        return database.active()
    except Exception:  # the database is being troubled on purpose
        return None


def run_chaos(config: Config) -> dict[str, Any]:  # noqa: PLR0912
    rng = random.Random(config.seed)
    directory = config.out or Path(tempfile.mkdtemp(prefix=f"dominus-chaos-{config.backend}-"))
    directory.mkdir(parents=True, exist_ok=True)
    database = Database(config, directory)
    log = Log()
    locker: subprocess.Popen[bytes] | None = None
    try:
        ids = database.enqueue(config.jobs)
        workers = Workers(config, database.url, directory)
        began = time.time()
        for _ in range(config.workers):
            workers.start()
        # Chaos starts once every worker has started (on a busy machine that takes seconds):
        # the first kills would otherwise land on workers still importing.
        started_deadline = time.monotonic() + 180
        while len(workers.working()) < config.workers and time.monotonic() < started_deadline:
            time.sleep(0.2)
        chaos_end = time.monotonic() + config.chaos_seconds
        restarts_due = (
            [
                (time.monotonic() + config.chaos_seconds / 3, "immediate"),
                (time.monotonic() + 2 * config.chaos_seconds / 3, "fast"),
            ]
            if config.backend == "postgresql"
            else []
        )
        next_kill = time.monotonic() + rng.uniform(*config.kill_every)
        next_terminate = time.monotonic() + rng.uniform(*config.terminate_every)
        next_lock = time.monotonic() + rng.uniform(*config.lock_every)
        next_check = time.monotonic()
        while time.monotonic() < chaos_end:
            now = time.monotonic()
            workers.supervise(log)
            if now >= next_kill:
                workers.kill_one(rng, log)
                next_kill = now + rng.uniform(*config.kill_every)
            if restarts_due and now >= restarts_due[0][0]:
                database.restart_server(restarts_due.pop(0)[1], log)
            if config.backend == "postgresql" and now >= next_terminate:
                database.terminate_backends(rng, log)
                next_terminate = now + rng.uniform(*config.terminate_every)
            if config.backend == "sqlite" and locker is None and now >= next_lock:
                locker = database.hold_write_lock(rng.uniform(*config.lock_for))
            if locker is not None and locker.poll() is not None:
                times = (locker.stdout.read() if locker.stdout else b"").split()
                if len(times) == 2:
                    window = (float(times[0]), float(times[1]))
                    log.locks.append(window)
                    log.trouble.append(window)
                locker = None
                next_lock = time.monotonic() + rng.uniform(*config.lock_every)
            if now >= next_check:
                next_check = now + 1.0
                if not restarts_due and _active_or_none(database) == 0:
                    break  # everything ended (PostgreSQL: after both restarts)
            time.sleep(0.1)
        chaos_seconds = time.time() - began
        if locker is not None:
            locker.wait(60)
        drain_deadline = time.monotonic() + config.drain_timeout
        while time.monotonic() < drain_deadline and _active_or_none(database) != 0:
            workers.supervise(log)
            time.sleep(0.5)
        duration = time.time() - began
        leftovers = workers.stop_all()
        statuses = database.statuses()
        executions = read_executions(sorted(workers.events.glob("events-*.jsonl")))
        crashes = [
            (restart["down"], restart["up"])
            for restart in log.server_restarts
            if restart["mode"] == "immediate"
        ]
        findings = analyse(ids, statuses, executions, log.kills, crashes)
        keyed = (
            analyse_keys(
                executions,
                database.job_keys(),
                statuses,
                log.kills,
                database.reclaimed_at(),
                read_grants(sorted(workers.events.glob("events-*.jsonl"))),
                (RATE_KEY, RATE_COUNT, RATE_PERIOD, sum(map(asks_limiter, range(config.jobs)))),
            ).summary()
            if config.keys
            else {}
        )
        clean = [
            recovery for recovery in _clean_recoveries(executions, log) if recovery is not None
        ]
        reclaims = reclaim_delays(executions, log.kills, database.reclaimed_at())
        clean_reclaims = [
            delay
            for killed, reclaimed, delay in reclaims
            if not any(start <= reclaimed and end >= killed for start, end in log.trouble)
        ]
        with_a_worker_up = reclaims_with_a_worker_up(executions, log.kills, reclaims)
        delays = [delay for _, _, delay in reclaims]
        live_reclaims = reclaims_of_live_workers(executions, log.kills, database.reclaimed_at())
        report = (
            {
                "backend": config.backend,
                "config": {k: v for k, v in asdict(config).items() if k != "out"},
                "duration_seconds": round(duration, 1),
                "chaos_seconds": round(chaos_seconds, 1),
                "kills": len(log.kills),
                "worker_restarts": log.restarts,
                "server_restarts": [r["mode"] for r in log.server_restarts],
                "terminated_backends": log.terminated_backends,
                "write_locks_held": len(log.locks),
                "write_lock_seconds": round(sum(end - start for start, end in log.locks), 1),
                "stuck_running": sum(1 for status in statuses.values() if status == "running"),
                "workers_killed_at_the_end": len(leftovers),
                "recovery_bound_seconds": config.recovery_bound(),
                "longest_clean_recovery_seconds": max(clean) if clean else None,
                "worker_exits": len(log.exits),
                "worker_exit_codes": sorted({exit_["code"] for exit_ in log.exits}),
                "reclaimed_after_kill": len(reclaims),
                "longest_reclaim_seconds": _max(delay for _, _, delay in reclaims),
                "median_reclaim_seconds": _median(delays),
                "reclaim_seconds_p90": percentile(delays, 0.9),
                "reclaim_seconds_p99": percentile(delays, 0.99),
                "reclaimed_from_live_workers": len(live_reclaims),
                "longest_clean_reclaim_seconds": _max(clean_reclaims),
                "longest_reclaim_with_a_worker_up_seconds": _max(with_a_worker_up),
                "median_recovery_seconds": _median(findings.recoveries),
                "failed_executions": sum(run.failed for run in executions),
                "failed_seconds_after_trouble": _failed_after_trouble(executions, log),
                "directory": str(directory),
            }
            | findings.summary()
            | keyed
        )
        (directory / "report.json").write_text(json.dumps(report, indent=2, default=str))
        # What the driver did, for later analysis (kills, restarts, trouble windows).
        (directory / "driver.json").write_text(json.dumps(asdict(log), indent=2, default=str))
        return report
    finally:
        with contextlib.suppress(Exception):
            if locker is not None:
                locker.kill()
        database.close()


def _clean_recoveries(executions: list[Any], log: Log) -> list[float | None]:
    """Recoveries of killed executions during which the database was not troubled (no lock
    held, no restart, no backend terminated between the kill and the next start)."""
    by_job: dict[int, list[Any]] = {}
    for execution in executions:
        by_job.setdefault(execution.job, []).append(execution)
    found: list[float | None] = []
    for runs in by_job.values():
        runs.sort(key=lambda run: run.start)
        for before, after in itertools.pairwise(runs):
            killed_at = log.kills.get(before.pid)
            if before.end is not None or killed_at is None:
                continue
            if not before.start <= killed_at <= after.start:
                continue
            troubled = any(start <= after.start and end >= killed_at for start, end in log.trouble)
            found.append(None if troubled else after.start - killed_at)
    return found


def _failed_after_trouble(executions: list[Any], log: Log) -> list[float | None]:
    """For each execution that raised, the seconds since the database trouble began that came
    last before it (None: none had): what its error was most likely about."""
    gaps: list[float | None] = []
    for run in executions:
        if run.failed:
            before = [start for start, _ in log.trouble if start <= run.end]
            gaps.append(round(run.end - max(before), 3) if before else None)
    return gaps


def _max(values: Any) -> float | None:
    found = list(values)
    return max(found) if found else None


def _median(values: list[float]) -> float | None:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else None


def markdown_row(report: dict[str, Any]) -> str:
    restarts = report["worker_restarts"]
    if report["server_restarts"]:
        restarts = f"{restarts} workers, {len(report['server_restarts'])} server"
    return (
        f"| {report['backend']} | {report['duration_seconds']:.0f} s | {report['jobs']} | "
        f"{report['kills']} | {restarts} | {report['lost']} | {report['overlapping']} | "
        f"{report['jobs_run_more_than_once']} | {_seconds(report['longest_reclaim_seconds'])} | "
        f"{_seconds(report['longest_recovery_seconds'])} |"
    )


def keys_row(report: dict[str, Any]) -> str:
    """Keyed jobs, each key's most running at once against its limit, slots leaked, and the
    limiter's busiest window against its limit."""
    keys = ", ".join(
        f"{key} {peak['most_running']}/{peak['limit']}" for key, peak in report["keys"].items()
    )
    return (
        f"| {report['backend']} | {report['keyed_jobs']} | {keys} | {report['slots_leaked']} | "
        f"{report['grants']} | {report['grants_most_in_a_window']} / {report['grant_limit']} "
        f"({report['grants_most_in_a_wall_window']} wall) |"
    )


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _seconds_range(text: str) -> tuple[float, float]:
    low, _, high = text.partition(",")
    bounds = float(low), float(high or low)
    if not 0 <= bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError(f"expected LOW,HIGH with 0 <= LOW <= HIGH, got {text!r}")
    return bounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), required=True)
    parser.add_argument("--smoke", action="store_true", help="300 jobs, about 30 s of chaos")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--chaos-seconds", type=float)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--log-level", help="the workers' log level (default WARNING)")
    parser.add_argument(
        "--keys",
        action="store_true",
        help="every second job with a concurrency key (limits 1, 2, 3, 5), every third asking "
        f"the shared limiter {RATE_KEY} ({RATE_COUNT}/{RATE_PERIOD:g}s); checks both limits",
    )
    parser.add_argument(
        "--default-timings",
        action="store_true",
        help="the seed's max running age, heartbeat, poll and retry defaults instead of fast "
        "ones: measures how soon a killed worker's jobs come back with what users run",
    )
    parser.add_argument(
        "--job-seconds",
        type=_seconds_range,
        help="LOW,HIGH: how long each job runs (default 0.05,0.25); a few milliseconds makes "
        "the workers claim ahead of their free slots (ADR 0033)",
    )
    args = parser.parse_args()
    config = smoke_config(args.backend) if args.smoke else Config(backend=args.backend)
    if args.job_seconds is not None:
        config.job_seconds = args.job_seconds
    if args.default_timings:
        with_default_timings(config)
    config.keys = args.keys
    for name in ("jobs", "workers", "chaos_seconds", "seed", "out", "log_level"):
        value = getattr(args, name)
        if value is not None:
            setattr(config, name, value)
    report = run_chaos(config)
    print(json.dumps(report, indent=2, default=str))
    print(markdown_row(report))
    if config.keys:
        print(keys_row(report))


if __name__ == "__main__":
    main()
