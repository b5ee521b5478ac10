#!/usr/bin/env python3
"""PostgreSQL under steady load: jobs offered at a fixed rate to real `dominus worker` processes.

Per run: a scratch database of its own on the server (created, migrated with
`dominus.schema.migrate.upgrade`, dropped at the end), `--workers` `dominus worker
--diagnostic-jobs --concurrency N` processes with every other setting at its default, and an
offering process that enqueues `diag.noop` one job per call (`JobQueue.enqueue_job`, as callers
do) at `--rate` jobs/s for `--seconds`, paced by the clock: job i is due at start + i / rate, the
offerer sleeps until then, and only catches up (without sleeping) when it falls behind.

Measured:
- pickup latency of every job from its row: `started_at − max(run_at, created_at)` (the claim's
  time and the enqueue's time, both from the database server's clock as DOMINUS reads it; what
  the `dominus_job_pickup_seconds` histogram observes);
- `n_dead_tup` (and `n_live_tup`) of job_queue from `pg_stat_user_tables`, once a second. The
  cumulative statistics are written by each backend at the end of a transaction at most once a
  second (PostgreSQL 15+), so a reading lags by up to about a second; `pg_stat_force_next_flush()`
  only flushes the calling backend's counts, so it cannot help here. `--pgstattuple` also reads
  `pgstattuple('job_queue')` (an exact count from a scan of the table, installed in the scratch
  database) with every sample;
- CPU: the worker processes (all threads, /proc/PID/stat) and the server backends of the scratch
  database (/proc of the PIDs `pg_stat_activity` lists for it, sampled every second; a backend
  that exits keeps its last reading), split into the workers' backends and the offerer's, from
  the first offer until the last job finished. Background processes shared by the whole cluster
  (WAL writer, checkpointer, autovacuum) are not counted; the whole cluster's CPU delta is shown
  beside, but other clients of the shared server count in it.

    .venv/bin/python bench/steady_load.py                      # 800 jobs/s, 60 s, 2 workers, 3 runs
    .venv/bin/python bench/steady_load.py --seconds 5 --rate 100 --repeats 1
    .venv/bin/python bench/steady_load.py --out bench/RESULTS.md
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing.connection import Connection as Pipe
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# This checkout's sources, for this process and for the workers it starts.
SRC = ROOT / "src"
sys.path[:0] = [str(HERE), str(SRC), str(ROOT)]

import psycopg  # noqa: E402

import envinfo  # noqa: E402
from common import stop_process, tail, wait_for  # noqa: E402
from pg import DEFAULT_URL, PgServer  # noqa: E402

NOOP = "diag.noop"
WARM_UP = "diag.sleep"
OFFERER = "steady-load offerer"
# Each worker's concurrency unless --concurrency says otherwise: the default (2) leaves a worker
# no free slot while both run, so a job enqueued then waits for a whole settle round trip.
DEFAULT_CONCURRENCY = 16
# A commit waits for its WAL flush: one caller alone reaches about 1 / (round trip + flush) jobs/s,
# less on a loaded machine. Several callers, as behind a web server, keep the pace.
DEFAULT_OFFER_THREADS = 4
# How long the jobs still pending at the end of offering may take to finish.
DRAIN_SECONDS = 30.0
SAMPLE_SECONDS = 1.0

_BACKENDS = """
    SELECT pid, coalesce(application_name, '') FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid()
"""
_TABLE_STATS = """
    SELECT n_dead_tup, n_live_tup, n_tup_upd, n_tup_hot_upd, n_tup_del,
           vacuum_count + autovacuum_count
      FROM pg_stat_user_tables WHERE relname = 'job_queue'
"""
_PICKUPS = """
    SELECT extract(epoch FROM started_at - greatest(run_at, created_at))
      FROM job_queue WHERE job_type = %s AND started_at IS NOT NULL
"""
# What each statement cost in the run (the statements of the workers and of the offerer; the
# sampler's and this script's own are left out by what they read).
_STATEMENTS = """
    SELECT query, calls, total_plan_time, total_exec_time, rows
      FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND query !~* 'pg_stat_|pgstattuple|pg_database'
     ORDER BY total_plan_time + total_exec_time DESC
"""
# The engine's own pickup histogram (`dominus_job_pickup_seconds`): from due to the handler's
# start, where the rows' started_at is the claim (a job claimed ahead waits after it).
_HISTOGRAM = """
    SELECT bucket, sum(value) FROM job_metrics
     WHERE name = 'pickup_bucket' AND job_type = %s GROUP BY bucket
"""
# Jobs handed back to pending unstarted (a job claimed ahead that waited past the worker's limit
# goes back, its attempt refunded; its row's started_at is then its second claim).
_CLAIMED_AGAIN = """
    SELECT count(DISTINCT job_id) FROM job_events WHERE kind = 'released'
       AND job_id IN (SELECT id FROM job_queue WHERE job_type = %s)
"""
_FINISHED = "SELECT count(*) FROM job_queue WHERE job_type = %s AND status = 'completed'"
_UNFINISHED = (
    "SELECT count(*) FROM job_queue WHERE job_type = %s AND status IN ('pending', 'running')"
)


# --- the offerer (a process of its own) ----------------------------------------------------------
@dataclass(frozen=True)
class Offered:
    jobs: int
    seconds: float
    worst_lag_seconds: float  # how far behind its schedule the offerer fell at worst
    started: float  # epoch seconds
    cpu_seconds: float

    @property
    def rate(self) -> float:
        return self.jobs / self.seconds if self.seconds > 0 else 0.0


def offer(
    url: str, rate: float, seconds: float, threads: int, start_at: float, reply: Pipe
) -> None:
    """Enqueue `rate` × `seconds` diag.noop jobs, one call each, job i at `start_at` + i / rate
    (epoch seconds), from `threads` threads taking turns (job i on thread i mod threads: one
    caller waiting for its commit does not hold up the next job's offer); send back an
    `Offered`."""
    from dominus.db.engine import create_database_engine  # noqa: PLC0415 - in the child
    from dominus.handlers import build_registry  # noqa: PLC0415
    from dominus.jobs import DatabaseClock, JobQueue, SqlJobStore  # noqa: PLC0415

    engine = create_database_engine(url)
    queue = JobQueue(
        SqlJobStore(engine), build_registry(diagnostic_jobs=True), clock=DatabaseClock(engine)
    )
    # Connect and warm up with jobs no worker runs during the measurement (due in 2100).
    for _ in range(threads):
        queue.enqueue_job(WARM_UP, {"seconds": 0}, run_at=datetime(2100, 1, 1).astimezone())
    total = round(rate * seconds)
    lags = [0.0] * threads
    cpu_before = time.process_time()
    time.sleep(max(0.0, start_at - time.time()))
    started = time.time()

    def take_turns(turn: int) -> None:
        for index in range(turn, total, threads):
            ahead = started + index / rate - time.time()
            if ahead > 0:
                time.sleep(ahead)
            else:
                lags[turn] = max(lags[turn], -ahead)
            queue.enqueue_job(NOOP)

    callers = [threading.Thread(target=take_turns, args=(turn,)) for turn in range(threads)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    elapsed = time.time() - started
    engine.dispose()
    reply.send(Offered(total, elapsed, max(lags), started, time.process_time() - cpu_before))
    reply.close()


# --- sampling while the run goes on ---------------------------------------------------------------
@dataclass
class Samples:
    dead: list[int] = field(default_factory=list)
    live: list[int] = field(default_factory=list)
    exact_dead: list[int] = field(default_factory=list)  # pgstattuple, with --pgstattuple
    table: tuple[int, ...] = ()  # the last row of _TABLE_STATS
    # CPU seconds used so far per backend PID, and which side it serves.
    backend_cpu: dict[int, float] = field(default_factory=dict)
    backend_side: dict[int, str] = field(default_factory=dict)


class Sampler(threading.Thread):
    """Every SAMPLE_SECONDS: the dead tuples of job_queue and the CPU of the database's
    backends. Sides: "offerer" (its application_name) or "workers" (everything else)."""

    def __init__(self, conninfo: str, exact: bool) -> None:
        super().__init__(name="steady-load sampler", daemon=True)
        self.samples = Samples()
        self._connection = psycopg.connect(conninfo, autocommit=True)
        self._exact = exact
        self._stopping = threading.Event()
        self._recording = threading.Event()
        self._lock = threading.Lock()  # the thread and the run both take samples

    def record(self) -> None:
        """Start keeping dead-tuple readings (CPU is read from the start, to know each
        backend's reading before the run)."""
        self._recording.set()

    def run(self) -> None:
        while not self._stopping.is_set():
            self.sample()
            self._stopping.wait(SAMPLE_SECONDS)

    def sample(self) -> None:
        with self._lock:
            self._sample()

    def _sample(self) -> None:
        samples = self.samples
        for pid, application in self._connection.execute(_BACKENDS).fetchall():
            samples.backend_side[pid] = "offerer" if application == OFFERER else "workers"
        for pid in samples.backend_side:
            used = _process_cpu(pid)
            if used is not None:
                samples.backend_cpu[pid] = used
        row = self._connection.execute(_TABLE_STATS).fetchone()
        if row is None or not self._recording.is_set():
            return
        samples.table = tuple(int(value or 0) for value in row)
        samples.dead.append(samples.table[0])
        samples.live.append(samples.table[1])
        if self._exact:
            exact = self._connection.execute(
                "SELECT dead_tuple_count FROM pgstattuple('job_queue')"
            ).fetchone()
            samples.exact_dead.append(int(exact[0]) if exact else 0)

    def backend_cpu(self) -> dict[str, float]:
        totals = {"workers": 0.0, "offerer": 0.0}
        for pid, used in self.samples.backend_cpu.items():
            totals[self.samples.backend_side[pid]] += used
        return totals

    def stop(self) -> None:
        self._stopping.set()
        self.join(10)
        self.sample()
        self._connection.close()


def _process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of a process on this machine (None once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- one run --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    offered: Offered
    completed: int
    pickup: dict[str, float]  # p50, p90, p99, max (seconds)
    dead_median: float
    dead_max: int
    exact_dead_median: float | None
    live_max: int
    table: tuple[int, ...]  # n_dead_tup, n_live_tup, n_tup_upd, n_tup_hot_upd, n_tup_del, vacuums
    worker_cpu: float  # seconds, the worker processes
    server_cpu: float  # seconds, the workers' backends
    offerer_cpu: float  # the offering process
    offerer_server_cpu: float  # its backend
    cluster_cpu: float | None  # the whole cluster, every client
    span: float  # seconds the CPU figures cover
    load: tuple[str, str]  # load average before and after
    # From the engine's histogram: the share of jobs whose handler started within 10 ms of
    # being due, and the bucket bound (seconds) that 99 % of them fell within.
    within_10ms: float = 0.0
    histogram_p99: float = 0.0
    claimed_again: int = 0
    # pg_stat_statements rows of the run (--statements): query, calls, plan ms, exec ms, rows.
    statements: tuple[tuple[Any, ...], ...] = ()


@dataclass(frozen=True)
class Options:
    rate: float
    seconds: float
    workers: int
    concurrency: int
    offer_threads: int
    exact: bool
    statements: bool = False


def one_run(server: PgServer, options: Options, workdir: Path) -> Run:
    from dominus.db.engine import create_database_engine  # noqa: PLC0415
    from dominus.schema.migrate import upgrade  # noqa: PLC0415

    load_before = envinfo.load_average()
    database = server.create("steady")
    workers: list[subprocess.Popen[bytes]] = []
    logs = [workdir / f"worker-{index}.log" for index in range(options.workers)]
    try:
        engine = create_database_engine(server.sqlalchemy_url(database))
        upgrade(engine)
        engine.dispose()
        if options.exact:
            with server.connect(database) as connection:
                connection.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        if options.statements:
            with server.connect(database) as connection:
                connection.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        workers = [start_worker(server, database, options.concurrency, log) for log in logs]
        wait_for(
            lambda: _count(server, database, "SELECT count(*) FROM workers") >= options.workers,
            timeout=60,
            interval=0.1,
            what="the workers to register",
        )
        sampler = Sampler(server.url(database), options.exact)
        sampler.start()
        offered, cpu = _offer_and_drain(server, database, options, workers, sampler, logs)
        sampler.stop()
        return _results(server, database, options, offered, cpu, sampler, load_before)
    finally:
        for worker in workers:
            stop_process(worker)
        server.drop(database)


@dataclass(frozen=True)
class _Cpu:
    workers: float
    backends: dict[str, float]
    cluster: float | None
    span: float


def _offer_and_drain(
    server: PgServer,
    database: str,
    options: Options,
    workers: Sequence[subprocess.Popen[bytes]],
    sampler: Sampler,
    logs: Sequence[Path],
) -> tuple[Offered, _Cpu]:
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    url = server.sqlalchemy_url(database) + f"?application_name={OFFERER.replace(' ', '%20')}"
    start_at = time.time() + 3.0  # time for the offerer's interpreter to start and connect
    offerer = context.Process(
        target=offer,
        args=(url, options.rate, options.seconds, options.offer_threads, start_at, send),
        daemon=True,
    )
    offerer.start()
    time.sleep(max(0.0, start_at - time.time() - 0.5))
    if options.statements:
        server.query(database, "SELECT pg_stat_statements_reset()")
    sampler.sample()  # every backend's reading just before the first offer
    backends_before = sampler.backend_cpu()
    workers_before = sum(_process_cpu(worker.pid) or 0.0 for worker in workers)
    cluster_before = server.cpu_seconds()
    began = time.monotonic()
    sampler.record()
    if not receive.poll(3 * options.seconds + 60):
        offerer.kill()
        raise RuntimeError("the offerer did not finish")
    offered: Offered = receive.recv()
    offerer.join(10)
    deadline = time.monotonic() + DRAIN_SECONDS
    while _count(server, database, _UNFINISHED, NOOP) > 0:
        for worker, log in zip(workers, logs, strict=True):
            if worker.poll() is not None:
                raise RuntimeError(f"a worker exited with {worker.returncode}:\n{tail(log)}")
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    span = time.monotonic() - began
    workers_after = sum(_process_cpu(worker.pid) or 0.0 for worker in workers)
    cluster = server.cpu_since(cluster_before)
    sampler.sample()
    backends_after = sampler.backend_cpu()
    backends = {side: backends_after[side] - backends_before[side] for side in backends_after}
    return offered, _Cpu(workers_after - workers_before, backends, cluster, span)


def _results(
    server: PgServer,
    database: str,
    options: Options,
    offered: Offered,
    cpu: _Cpu,
    sampler: Sampler,
    load_before: str,
) -> Run:
    pickups = sorted(float(row[0]) for row in server.query(database, _PICKUPS, (NOOP,)))
    statements = server.query(database, _STATEMENTS) if options.statements else []
    within_10ms, histogram_p99 = _histogram(server.query(database, _HISTOGRAM, (NOOP,)))
    samples = sampler.samples
    return Run(
        offered=offered,
        completed=_count(server, database, _FINISHED, NOOP),
        pickup=_quantiles(pickups),
        dead_median=statistics.median(samples.dead) if samples.dead else 0.0,
        dead_max=max(samples.dead, default=0),
        exact_dead_median=statistics.median(samples.exact_dead) if samples.exact_dead else None,
        live_max=max(samples.live, default=0),
        table=samples.table,
        worker_cpu=cpu.workers,
        server_cpu=cpu.backends["workers"],
        offerer_cpu=offered.cpu_seconds,
        offerer_server_cpu=cpu.backends["offerer"],
        cluster_cpu=cpu.cluster,
        span=cpu.span,
        load=(load_before, envinfo.load_average()),
        statements=tuple(statements),
        within_10ms=within_10ms,
        histogram_p99=histogram_p99,
        claimed_again=_count(server, database, _CLAIMED_AGAIN, NOOP),
    )


def _histogram(rows: Sequence[tuple[Any, ...]]) -> tuple[float, float]:
    """(share within 10 ms, the bucket bound 99 % fell within) from (label, count) rows."""
    buckets = sorted((float(label), float(count)) for label, count in rows)  # "+Inf" → inf
    total = sum(count for _, count in buckets) or 1.0
    within = sum(count for bound, count in buckets if bound <= 0.010) / total
    seen = 0.0
    for bound, count in buckets:
        seen += count
        if seen >= 0.99 * total:
            return within, bound
    return within, float("inf")


def _quantiles(ordered: Sequence[float]) -> dict[str, float]:
    if not ordered:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0}

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    return {"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": ordered[-1]}


def _count(server: PgServer, database: str, sql: str, *params: Any) -> int:
    return int(server.query(database, sql, params)[0][0])


def start_worker(
    server: PgServer, database: str, concurrency: int, log: Path
) -> subprocess.Popen[bytes]:
    """`dominus worker` with its default settings (none inherited from this environment), this
    checkout's sources, the diagnostic job types and `concurrency`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JOB_", "WORKER_"))}
    env |= {
        "DATABASE_URL": server.sqlalchemy_url(database),
        "PYTHONPATH": os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "DOMINUS_LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "dominus.cli.main", "worker", "--diagnostic-jobs"]
    command += ["--concurrency", str(concurrency)]
    with log.open("wb") as out:
        return subprocess.Popen(command, env=env, cwd=log.parent, stdout=out, stderr=out)


# --- the report -----------------------------------------------------------------------------------
def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f}"


def _us_per_job(seconds: float | None, jobs: int) -> str:
    return "—" if seconds is None or jobs == 0 else f"{1e6 * seconds / jobs:.0f}"


def run_rows(runs: Sequence[Run]) -> list[str]:
    lines = [
        "| run | offered /s | offerer's worst lag ms | completed | pickup p50 ms | p90 | p99 | max "
        "| handler start ≤ 10 ms (histogram) | histogram p99 ≤ ms | claimed again "
        "| n_dead_tup median | max | worker CPU µs/job | server (workers' backends) µs/job "
        "| offerer µs/job | offerer's backend µs/job | whole cluster µs/job "
        "| load before → after |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for number, run in enumerate(runs, 1):
        jobs = run.completed
        pickup = run.pickup
        dead = f"{run.dead_median:,.0f}"
        if run.exact_dead_median is not None:
            dead += f" (pgstattuple {run.exact_dead_median:,.0f})"
        lines.append(
            f"| {number} | {run.offered.rate:,.1f} | {_ms(run.offered.worst_lag_seconds)} | "
            f"{jobs:,} | {_ms(pickup['p50'])} | "
            f"{_ms(pickup['p90'])} | {_ms(pickup['p99'])} | {_ms(pickup['max'])} | "
            f"{100 * run.within_10ms:.1f} % | {1000 * run.histogram_p99:g} | "
            f"{run.claimed_again:,} | {dead} | "
            f"{run.dead_max:,} | {_us_per_job(run.worker_cpu, jobs)} | "
            f"{_us_per_job(run.server_cpu, jobs)} | {_us_per_job(run.offerer_cpu, jobs)} | "
            f"{_us_per_job(run.offerer_server_cpu, jobs)} | {_us_per_job(run.cluster_cpu, jobs)} "
            f"| {run.load[0]} → {run.load[1]} |"
        )
    return lines


def summary(runs: Sequence[Run]) -> dict[str, float]:
    def med(values: Sequence[float]) -> float:
        return float(statistics.median(values))

    return {
        "offered_rate": med([run.offered.rate for run in runs]),
        "completed": med([run.completed for run in runs]),
        "pickup_p50_ms": med([1000 * run.pickup["p50"] for run in runs]),
        "pickup_p90_ms": med([1000 * run.pickup["p90"] for run in runs]),
        "pickup_p99_ms": med([1000 * run.pickup["p99"] for run in runs]),
        "pickup_max_ms": med([1000 * run.pickup["max"] for run in runs]),
        "within_10ms_share": med([run.within_10ms for run in runs]),
        "dead_tuples_median": med([run.dead_median for run in runs]),
        "dead_tuples_max": med([run.dead_max for run in runs]),
        "worker_cpu_us_per_job": med(
            [1e6 * run.worker_cpu / max(run.completed, 1) for run in runs]
        ),
        "server_cpu_us_per_job": med(
            [1e6 * run.server_cpu / max(run.completed, 1) for run in runs]
        ),
    }


def statement_rows(run: Run, limit: int = 12) -> list[str]:
    """Where the server's time went, per job: the statements of the last run."""
    jobs = max(run.completed, 1)
    total = sum(row[2] + row[3] for row in run.statements) or 1.0
    lines = [
        f"Statements (pg_stat_statements, last run): {1000 * total / jobs:.0f} µs of planning "
        "and execution per job in all (not parse, protocol, commit or waiting).",
        "",
        "| statement | calls per job | plan µs per job | exec µs per job | share | rows per call |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for query, calls, plan_ms, exec_ms, rows in run.statements[:limit]:
        text = " ".join(str(query).split())
        text = text if len(text) <= 100 else text[:99] + "…"
        lines.append(
            f"| `{text}` | {calls / jobs:.3f} | {1000 * plan_ms / jobs:.1f} | "
            f"{1000 * exec_ms / jobs:.1f} | {100 * (plan_ms + exec_ms) / total:.1f} % | "
            f"{rows / max(calls, 1):.2f} |"
        )
    return lines


def report(options: Options, runs: Sequence[Run], machine: Sequence[tuple[str, str]]) -> str:
    figures = summary(runs)
    last = runs[-1].table
    lines = [
        f"## {datetime.now().astimezone().isoformat(timespec='seconds')} — PostgreSQL under "
        f"steady load: {options.rate:g} jobs/s offered for {options.seconds:g} s, "
        f"{options.workers} workers × concurrency {options.concurrency}",
        "",
        *(f"- {name}: {value}" for name, value in machine),
        "- method: `bench/steady_load.py` (its docstring): single enqueues paced by the clock "
        f"from one offering process ({options.offer_threads} threads taking turns); "
        "`dominus worker --diagnostic-jobs --concurrency "
        f"{options.concurrency}`, default settings otherwise; pickup = started_at − "
        "max(run_at, created_at) from every row; n_dead_tup from pg_stat_user_tables once a "
        "second; server CPU = /proc of the database's backends (the workers' and the offerer's "
        "apart), whole cluster = the postmaster and all its children, every client of the "
        "shared server included",
        "",
        f"Medians of {len(runs)}: offered {figures['offered_rate']:,.1f} jobs/s, "
        f"pickup p50 {figures['pickup_p50_ms']:.1f} ms, p90 {figures['pickup_p90_ms']:.1f} ms, "
        f"**p99 {figures['pickup_p99_ms']:.1f} ms**, max {figures['pickup_max_ms']:.1f} ms "
        "(from the rows: claim − due); handlers started within 10 ms of due: "
        f"{100 * figures['within_10ms_share']:.1f} % (the engine's histogram); "
        f"**n_dead_tup median {figures['dead_tuples_median']:,.0f}**, "
        f"max {figures['dead_tuples_max']:,.0f}; CPU per job: worker processes "
        f"{figures['worker_cpu_us_per_job']:.0f} µs, their backends "
        f"{figures['server_cpu_us_per_job']:.0f} µs.",
        "",
        *run_rows(runs),
        "",
        f"job_queue at the end of the last run: {last[2]:,} updates of which {last[3]:,} HOT, "
        f"{last[4]:,} deletes, {last[5]} vacuums (manual + auto) since the database was made.",
    ]
    if runs[-1].statements:
        lines += ["", *statement_rows(runs[-1])]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=800.0, help="jobs offered per second")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long jobs are offered")
    parser.add_argument("--workers", type=int, default=2, help="dominus worker processes")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"each worker's --concurrency (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--offer-threads",
        type=int,
        default=DEFAULT_OFFER_THREADS,
        help=f"threads of the offering process taking turns (default {DEFAULT_OFFER_THREADS})",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs; the summary shows medians")
    parser.add_argument("--pgstattuple", action="store_true", help="also count dead tuples exactly")
    parser.add_argument(
        "--statements",
        action="store_true",
        help="with --throwaway-cluster: the server's time per statement (pg_stat_statements)",
    )
    parser.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", DEFAULT_URL))
    parser.add_argument(
        "--throwaway-cluster",
        action="store_true",
        help="run on a cluster of its own (initdb, PostgreSQL's default settings) instead",
    )
    parser.add_argument(
        "--server-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the throwaway cluster (repeatable), e.g. autovacuum_naptime=10",
    )
    parser.add_argument("--out", type=Path, help="append the report to this markdown file")
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.seconds <= 0:
        parser.error("--rate and --seconds must be positive")
    if min(args.workers, args.repeats, args.concurrency, args.offer_threads) < 1:
        parser.error("--workers, --concurrency, --offer-threads and --repeats must be at least 1")
    settings = dict(_setting(parser, text) for text in args.server_setting)
    if (settings or args.statements) and not args.throwaway_cluster:
        parser.error("--server-setting and --statements need --throwaway-cluster")
    if args.statements:
        # Read per database; reset for the whole cluster, so only on a cluster of our own.
        settings = {
            "shared_preload_libraries": "pg_stat_statements",
            "pg_stat_statements.track_planning": "on",
        } | settings
    options = Options(
        args.rate,
        args.seconds,
        args.workers,
        args.concurrency,
        args.offer_threads,
        args.pgstattuple,
        args.statements,
    )
    with _server(args.pg_url, settings if args.throwaway_cluster else None) as server:
        return _measure(server, options, args.repeats, args.out)


def _setting(parser: argparse.ArgumentParser, text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        parser.error(f"--server-setting wants NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


@contextlib.contextmanager
def _server(url: str, throwaway: dict[str, str] | None) -> Iterator[PgServer]:
    """The server at `url`, or (`throwaway` settings given) a cluster of this run's own."""
    if throwaway is None:
        yield PgServer(url)
        return
    from tests.support.throwaway_postgres import ThrowawayPostgres  # noqa: PLC0415

    cluster = ThrowawayPostgres()
    cluster.settings = throwaway
    try:
        cluster.init()
        cluster.start()
        yield PgServer(f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres")
    finally:
        cluster.destroy()


def _measure(
    server: PgServer, options: Options, repeats: int, out: Path | None
) -> dict[str, float]:
    machine = [
        (name, value)
        for name, value in envinfo.describe(sqlite=False)
        if name in ("date", "command", "CPU", "cores", "load average at start", "DOMINUS")
    ]
    naptime = server.query("postgres", "SELECT current_setting('autovacuum_naptime')")[0][0]
    described = f"{server.version().split(' on ')[0]}; {server.settings()}, naptime={naptime}"
    machine.append(("PostgreSQL", described))
    print("\n".join(f"- {name}: {value}" for name, value in machine), flush=True)
    runs: list[Run] = []
    try:
        for number in range(1, repeats + 1):
            with tempfile.TemporaryDirectory(prefix="dominus-steady-") as workdir:
                run = one_run(server, options, Path(workdir))
            runs.append(run)
            print("\n".join(run_rows([run])[2:]).replace("| 1 |", f"| {number} |", 1), flush=True)
    finally:
        server.drop_all()
    text = report(options, runs, machine)
    print("\n" + text, flush=True)
    if out is not None:
        with out.open("a") as results:
            results.write("\n" + text + "\n")
    return summary(runs)


if __name__ == "__main__":
    main()
