#!/usr/bin/env python3
"""DOMINUS benchmark (diag.noop jobs) on SQLite, compared with huey's SqliteHuey, and on
PostgreSQL, compared with procrastinate and pgqueuer on the same server.

    python3 dev.py bench                       full run, both backends (3 repeats, medians)
    python3 dev.py bench --backend sqlite      SQLite only (or: --backend postgresql)
    python3 dev.py bench --quick               smoke run: small sizes, 1 repeat, no 1M-row step
    python3 dev.py bench --output bench/RESULTS.md
                                               also append a markdown section to that file

Measures enqueue throughput (single and batched, Python API), drain throughput of one worker
process at several concurrencies (on PostgreSQL also of 1, 2 and 4 processes), enqueue→start
latency with an idle worker, and the drain again with 1,000,000 finished jobs in the table;
then the same workload through the other systems. See bench/README.md for how each figure is
measured.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import envinfo
import report
from common import FULL, LATENCY_GAP_SECONDS, QUICK, Drain, Sizes, percentiles
from dominus_bench import DominusBench
from dominus_pg_bench import DominusPgBench
from huey_bench import HueyBench
from pg import DEFAULT_URL, PgServer
from pgqueuer_bench import PgqueuerBench
from procrastinate_bench import ProcrastinateBench
from report import DOMINUS, HUEY, PGQUEUER, PROCRASTINATE, Results, Section

BENCH_DIR = Path(__file__).resolve().parent


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 dev.py bench",
        description="DOMINUS vs huey on SQLite and vs procrastinate and pgqueuer on PostgreSQL "
        "(diag.noop jobs).",
    )
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgresql", "both"),
        default="both",
        help="which backend(s) to measure (default: both)",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, 1 repeat, no 1M step")
    parser.add_argument("--repeats", type=int, help="runs per measurement (default 3; quick 1)")
    parser.add_argument("--output", type=Path, help="append a markdown section to this file")
    parser.add_argument("--drain-jobs", type=int, help="jobs per drain (default 20,000)")
    parser.add_argument(
        "--prefill-rows", type=int, help="finished jobs for the big-table step (0 skips it)"
    )
    sqlite = parser.add_argument_group("SQLite")
    sqlite.add_argument("--skip-huey", action="store_true", help="no huey measurements")
    sqlite.add_argument(
        "--huey-synchronous",
        choices=("normal", "off"),
        default="normal",
        help="huey's PRAGMA synchronous: normal (as DOMINUS, default) or off (what "
        "fsync=False sets)",
    )
    sqlite.add_argument("--tmpdir", type=Path, help="where the temporary files go")
    postgres = parser.add_argument_group("PostgreSQL")
    postgres.add_argument(
        "--pg-url",
        default=os.environ.get("BENCH_PG_URL", DEFAULT_URL),
        help="server to create the benchmark's databases on (default $BENCH_PG_URL or "
        f"{DEFAULT_URL}); needs CREATEDB",
    )
    postgres.add_argument(
        "--pg-concurrencies",
        help="one-process drain concurrencies, comma-separated; the last is the high one "
        "(default 1,4,16,100)",
    )
    postgres.add_argument(
        "--process-concurrency",
        type=int,
        help="concurrency of each process in the 1/2/4-process drains (default 100)",
    )
    postgres.add_argument(
        "--pgqueuer-batch-size", type=int, help="pgqueuer's dequeue batch size (default 100)"
    )
    postgres.add_argument("--skip-procrastinate", action="store_true")
    postgres.add_argument("--skip-pgqueuer", action="store_true")
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def sizes_from(args: argparse.Namespace) -> Sizes:
    sizes = QUICK if args.quick else FULL
    if args.drain_jobs is not None:
        sizes = replace(sizes, drain_jobs=args.drain_jobs)
    if args.prefill_rows is not None:
        sizes = replace(sizes, prefill_rows=args.prefill_rows)
    if args.pg_concurrencies:
        values = tuple(int(part) for part in args.pg_concurrencies.split(",") if part.strip())
        sizes = replace(sizes, pg_concurrencies=values)
    if args.process_concurrency is not None:
        sizes = replace(sizes, process_concurrency=args.process_concurrency)
    if args.pgqueuer_batch_size is not None:
        sizes = replace(sizes, pgqueuer_batch_size=args.pgqueuer_batch_size)
    return sizes


class DrainsPrefilled(Protocol):
    def drain(self, jobs: int, concurrency: int, *, prefilled: bool = False) -> Drain: ...


class Steps:
    """Runs measurements `repeats` times and collects them for one backend's section."""

    def __init__(self, backend: str, sizes: Sizes, repeats: int) -> None:
        self.backend = backend
        self.sizes = sizes
        self.repeats = repeats
        self.results = Results()
        self.failures: list[str] = []
        self.notes: list[str] = []

    def repeat(self, label: str, measure: Callable[[int], str]) -> None:
        """Run `measure(run)` `repeats` times."""
        self.side_by_side([(label, measure)])

    def side_by_side(self, measures: list[tuple[str, Callable[[int], str]]]) -> None:
        """Run each measure `repeats` times, interleaved run by run (A1 B1 A2 B2 …), so systems
        compared against each other share the machine's slow and fast spells instead of one
        getting all of a noisy neighbour's load. A failed run is reported and left out of the
        medians; after two failures a measure gives up."""
        failed = dict.fromkeys((label for label, _ in measures), 0)
        for run in range(1, self.repeats + 1):
            for label, measure in measures:
                if failed[label] < 2 and not self._run_once(label, measure, run):
                    failed[label] += 1

    def _run_once(self, label: str, measure: Callable[[int], str], run: int) -> bool:
        started = time.perf_counter()
        try:
            summary = measure(run)
        except Exception as error:
            traceback.print_exc()
            first_line = (str(error).splitlines() or [""])[0]
            self.failures.append(f"{label}, run {run}: {type(error).__name__}: {first_line}")
            print(f"  {label} run {run}/{self.repeats}: FAILED ({error})", flush=True)
            return False
        took = time.perf_counter() - started
        print(f"  {label} run {run}/{self.repeats}: {summary}  [{took:.1f} s]", flush=True)
        return True

    def big_table_drain(self, ours: DrainsPrefilled, rows: int, jobs: int, c: int) -> None:
        """The drain on the big table beside the same drain on an empty one, run by run, and
        their ratio from those pairs: the empty-table drains measured earlier in the run met
        another spell of the machine's load, and a ratio across spells measured the load."""
        key = f"drain1m_c{c}"
        self.side_by_side(
            [
                (
                    f"DOMINUS drain c={c}, empty table",
                    lambda _: self.drain(f"{key}_empty", DOMINUS, ours.drain(jobs, c)),
                ),
                (
                    f"DOMINUS drain c={c} with {rows:,} finished rows",
                    lambda _: self.drain(key, DOMINUS, ours.drain(jobs, c, prefilled=True)),
                ),
            ]
        )
        self.ratio(f"{key}_ratio", key, f"{key}_empty")

    def drain(self, key: str, system: str, result: Drain) -> str:
        self.results.add(key, system, result.throughput)
        self.results.add(f"{key}_wall", system, result.wall_seconds)
        text = f"{result.throughput:,.0f} jobs/s, wall {result.wall_seconds:.2f} s"
        span = result.cpu_span_seconds
        if result.worker_cpu_seconds is not None and result.db_cpu_seconds is not None and span:
            worker = 100 * result.worker_cpu_seconds / span
            db = 100 * result.db_cpu_seconds / span
            self.results.add(f"{key}_worker_cpu", system, worker)
            self.results.add(f"{key}_db_cpu", system, db)
            text += f", CPU worker {worker:.0f} % / PostgreSQL {db:.0f} %"
        return text

    def latency(self, system: str, samples: list[float]) -> str:
        cuts = percentiles(samples)
        for name, value in cuts.items():
            self.results.add(f"latency_{name}", system, value)
        return ", ".join(f"{name} {value:.1f} ms" for name, value in cuts.items())

    def rate(self, key: str, system: str, value: float) -> str:
        self.results.add(key, system, value)
        return f"{value:,.0f} jobs/s"

    def ratio(self, key: str, numerator: str, denominator: str) -> None:
        top = self.results.median(numerator, DOMINUS)
        bottom = self.results.median(denominator, DOMINUS)
        if top is not None and bottom:
            self.results.add(key, DOMINUS, top / bottom)


# --- SQLite ------------------------------------------------------------------------------------
class SqliteSteps(Steps):
    def __init__(
        self, sizes: Sizes, repeats: int, dominus: DominusBench, huey: HueyBench | None
    ) -> None:
        super().__init__("SQLite", sizes, repeats)
        self.dominus = dominus
        self.huey = huey

    def enqueue(self) -> None:
        sizes, ours = self.sizes, self.dominus
        print(f"SQLite enqueue: {sizes.single_enqueue:,} single, {sizes.batched_enqueue:,} batched")
        singles: list[tuple[str, Callable[[int], str]]] = [
            (
                "DOMINUS enqueue single",
                lambda _: self.rate(
                    "enqueue_single",
                    DOMINUS,
                    ours.enqueue_single(sizes.single_enqueue, sizes.warmup),
                ),
            )
        ]
        if self.huey is not None:
            theirs = self.huey
            singles.append(
                (
                    "huey enqueue single",
                    lambda _: self.rate(
                        "enqueue_single",
                        HUEY,
                        theirs.enqueue_single(sizes.single_enqueue, sizes.warmup),
                    ),
                )
            )
        self.side_by_side(singles)
        self.repeat(
            "DOMINUS enqueue batched",
            lambda _: self.rate(
                "enqueue_batched",
                DOMINUS,
                ours.enqueue_batched(sizes.batched_enqueue, sizes.batch_size),
            ),
        )

    def drains(self) -> None:
        jobs = self.sizes.drain_jobs
        print(f"SQLite drain: {jobs:,} jobs, one worker process")
        theirs = self.huey
        for concurrency in self.sizes.concurrencies:
            key = f"drain_c{concurrency}"
            measures: list[tuple[str, Callable[[int], str]]] = [
                (
                    f"DOMINUS drain c={concurrency}",
                    lambda _, c=concurrency, k=key: self.drain(
                        k, DOMINUS, self.dominus.drain(jobs, c)
                    ),
                )
            ]
            if theirs is not None:
                measures.append(
                    (
                        f"huey drain -w {concurrency}",
                        lambda _, c=concurrency, k=key, t=theirs: self.drain(
                            k, HUEY, t.drain(jobs, c)
                        ),
                    )
                )
            self.side_by_side(measures)

    def latencies(self) -> None:
        jobs = self.sizes.latency_jobs
        print(f"SQLite pickup latency: {jobs} jobs, idle worker, default polling")
        self.repeat(
            "DOMINUS latency",
            lambda run: self.latency(DOMINUS, self.dominus.latency(jobs, seed=run)),
        )
        if self.huey is not None:
            theirs = self.huey
            self.repeat(
                "huey latency", lambda run: self.latency(HUEY, theirs.latency(jobs, seed=run))
            )

    def prefilled(self) -> list[int]:
        rows, jobs = self.sizes.prefill_rows, self.sizes.drain_jobs
        if rows <= 0:
            return []
        chosen = choose_prefilled(self.results, self.sizes.concurrencies, 16)
        print(f"SQLite big table: {rows:,} finished jobs, drain {jobs:,} at concurrency {chosen}")
        try:
            took = self.dominus.build_prefilled(rows)
        except Exception as error:
            traceback.print_exc()
            self.failures.append(f"prefill: {type(error).__name__}: {error}")
            return []
        self.notes.append(f"{rows:,} completed rows were inserted with raw sqlite3 in {took:.1f} s")
        try:
            for concurrency in chosen:
                self.big_table_drain(self.dominus, rows, jobs, concurrency)
        finally:
            self.dominus.drop_prefilled()
        return chosen

    def section(self, prefilled: list[int], huey_synchronous: str) -> Section:
        low, high = (round(gap * 1000) for gap in LATENCY_GAP_SECONDS)
        sizes = self.sizes
        notes = [
            f"Sizes: {sizes.single_enqueue:,} single enqueues and {sizes.batched_enqueue:,} "
            f"batched (after {sizes.warmup} untimed); {sizes.drain_jobs:,} jobs per drain; "
            f"{sizes.latency_jobs} latency jobs enqueued one at a time {low}–{high} ms apart.",
            f"DOMINUS SQLite: {self.dominus.settings()} (set by dominus.db.engine).",
            "Drain throughput: DOMINUS = jobs / (max(finished_at) − min(started_at)) read from "
            "job_queue after a `dominus worker --burst` run; huey = jobs / (moment the last "
            "result was seen stored, polled every 5 ms − earliest task start). Wall time: "
            "worker process start → exit (DOMINUS) / consumer start → last result seen (huey "
            "has no burst mode).",
            "Pickup latency: worker/consumer at concurrency 2, default polling, idle 1 s after "
            "it is up; DOMINUS = started_at − created_at; huey = time.time() in the task − "
            "time.time() just before the task call.",
            "DOMINUS/huey: for throughput, above 1 means DOMINUS is faster; for times (wall, "
            "latency), below 1 means DOMINUS is faster. 'Met' judges DOMINUS against its "
            "targets.",
        ]
        if self.huey is not None:
            how = (
                "raised from OFF (what fsync=False sets) to NORMAL by the benchmark, to match "
                "DOMINUS"
                if huey_synchronous == "normal"
                else "huey's own fsync=False setting, less durable than DOMINUS"
            )
            notes.append(
                f"huey SQLite: {self.huey.settings()} — SqliteStorage sets journal_mode=wal "
                f"itself; synchronous {how}. Consumer: huey_consumer huey_tasks.huey -w N -k "
                "thread -q (default polling: -d 0.1 -m 10 -b 1.15; results stored, as DOMINUS "
                "stores them)."
            )
        notes += self.notes + [f"FAILED {failure}" for failure in self.failures]
        return Section(
            "SQLite",
            self.results,
            report.sqlite_rows(sizes, prefilled),
            [HUEY] if self.huey is not None else [],
            notes,
        )


def choose_prefilled(results: Results, concurrencies: tuple[int, ...], main: int) -> list[int]:
    """`main` and the best other concurrency of the empty-table drains."""
    others = [c for c in concurrencies if c != main]
    if not others:
        return [main]
    best = max(others, key=lambda c: results.median(f"drain_c{c}", DOMINUS) or 0.0)
    return [main, best]


def run_sqlite(
    args: argparse.Namespace, sizes: Sizes, repeats: int, workdir: Path
) -> tuple[Section, list[str]]:
    bin_dir = Path(sys.executable).parent
    huey = None if args.skip_huey else HueyBench(workdir, bin_dir, BENCH_DIR, args.huey_synchronous)
    steps = SqliteSteps(sizes, repeats, DominusBench(workdir, bin_dir), huey)
    steps.enqueue()
    steps.drains()
    steps.latencies()
    prefilled = steps.prefilled()
    return steps.section(prefilled, args.huey_synchronous), steps.failures


# --- PostgreSQL --------------------------------------------------------------------------------
def run_postgres(
    args: argparse.Namespace, sizes: Sizes, repeats: int, workdir: Path, server: PgServer
) -> tuple[Section, list[str]]:
    bin_dir = Path(sys.executable).parent
    steps = PostgresSteps(
        sizes,
        repeats,
        server,
        DominusPgBench(server, workdir, bin_dir),
        None
        if args.skip_procrastinate
        else ProcrastinateBench(server, workdir, bin_dir, BENCH_DIR),
        None
        if args.skip_pgqueuer
        else PgqueuerBench(server, workdir, bin_dir, BENCH_DIR, sizes.pgqueuer_batch_size),
    )
    steps.enqueue()
    steps.drains()
    steps.process_drains()
    steps.latencies()
    prefilled = steps.prefilled()
    return steps.section(prefilled), steps.failures


class PostgresSteps(Steps):
    def __init__(
        self,
        sizes: Sizes,
        repeats: int,
        server: PgServer,
        dominus: DominusPgBench,
        procrastinate: ProcrastinateBench | None,
        pgqueuer: PgqueuerBench | None,
    ) -> None:
        super().__init__("PostgreSQL", sizes, repeats)
        self.server = server
        self.dominus = dominus
        self.procrastinate = procrastinate
        self.pgqueuer = pgqueuer

    def _others(self) -> list[tuple[str, ProcrastinateBench | PgqueuerBench]]:
        return [
            (system, bench)
            for system, bench in ((PROCRASTINATE, self.procrastinate), (PGQUEUER, self.pgqueuer))
            if bench is not None
        ]

    def enqueue(self) -> None:
        sizes = self.sizes
        print(
            f"PostgreSQL enqueue: {sizes.single_enqueue:,} single, {sizes.batched_enqueue:,} "
            "batched"
        )
        systems = [(DOMINUS, self.dominus), *self._others()]
        self.side_by_side(
            [
                (
                    f"{report.NAMES[system]} enqueue single",
                    lambda _, s=system, b=bench: self.rate(
                        "enqueue_single", s, b.enqueue_single(sizes.single_enqueue, sizes.warmup)
                    ),
                )
                for system, bench in systems
            ]
        )
        self.side_by_side(
            [
                (
                    f"{report.NAMES[system]} enqueue batched",
                    lambda _, s=system, b=bench: self.rate(
                        "enqueue_batched",
                        s,
                        b.enqueue_batched(sizes.batched_enqueue, sizes.batch_size),
                    ),
                )
                for system, bench in systems
            ]
        )

    def drains(self) -> None:
        jobs, high = self.sizes.drain_jobs, self.sizes.pg_concurrencies[-1]
        print(f"PostgreSQL drain: {jobs:,} jobs, one worker process")
        for concurrency in self.sizes.pg_concurrencies:
            key = f"drain_c{concurrency}"
            measures: list[tuple[str, Callable[[int], str]]] = [
                (
                    f"DOMINUS drain c={concurrency}",
                    lambda _, c=concurrency, k=key: self.drain(
                        k, DOMINUS, self.dominus.drain(jobs, c)
                    ),
                )
            ]
            if self.procrastinate is not None:
                measures.append(
                    (
                        f"procrastinate drain --concurrency {concurrency}",
                        lambda _, c=concurrency, k=key, b=self.procrastinate: self.drain(
                            k, PROCRASTINATE, b.drain(jobs, c)
                        ),
                    )
                )
            if self.pgqueuer is not None and concurrency == high:
                measures.append(
                    (
                        f"pgqueuer drain --batch-size {self.sizes.pgqueuer_batch_size}",
                        lambda _, k=key, b=self.pgqueuer: self.drain(k, PGQUEUER, b.drain(jobs)),
                    )
                )
            self.side_by_side(measures)

    def process_drains(self) -> None:
        jobs, concurrency = self.sizes.drain_jobs, self.sizes.process_concurrency
        print(f"PostgreSQL drain: {jobs:,} jobs, 1/2/4 processes × concurrency {concurrency}")
        previous = None
        for processes in self.sizes.processes:
            key = f"drain_p{processes}"
            self.repeat(
                f"DOMINUS drain {processes} process(es) × c={concurrency}",
                lambda _, p=processes, k=key: self.drain(
                    k, DOMINUS, self.dominus.drain_warm(jobs, concurrency, p)
                ),
            )
            if previous is not None:
                self.ratio(f"{key}_gain", key, f"drain_p{previous}")
            previous = processes

    def latencies(self) -> None:
        jobs = self.sizes.latency_jobs
        print(f"PostgreSQL pickup latency: {jobs} jobs, idle worker, default polling + NOTIFY")
        for system, bench in [(DOMINUS, self.dominus), *self._others()]:
            self.repeat(
                f"{report.NAMES[system]} latency",
                lambda run, s=system, b=bench: self.latency(s, b.latency(jobs, seed=run)),
            )

    def prefilled(self) -> list[int]:
        rows, jobs = self.sizes.prefill_rows, self.sizes.drain_jobs
        if rows <= 0:
            return []
        high = self.sizes.pg_concurrencies[-1]
        chosen = choose_prefilled(self.results, self.sizes.pg_concurrencies, high)
        print(
            f"PostgreSQL big table: {rows:,} finished jobs, drain {jobs:,} at concurrency {chosen}"
        )
        try:
            took = self.dominus.build_prefilled(rows)
        except Exception as error:
            traceback.print_exc()
            self.failures.append(f"prefill: {type(error).__name__}: {error}")
            return []
        self.notes.append(
            f"{rows:,} completed rows were inserted with one INSERT … SELECT generate_series and "
            f"vacuumed in {took:.1f} s; each big-table drain runs on a copy (CREATE DATABASE … "
            "TEMPLATE … STRATEGY FILE_COPY)."
        )
        try:
            for concurrency in chosen:
                self.big_table_drain(self.dominus, rows, jobs, concurrency)
        finally:
            self.dominus.drop_prefilled()
        return chosen

    def section(self, prefilled: list[int]) -> Section:
        sizes = self.sizes
        low, high_gap = (round(gap * 1000) for gap in LATENCY_GAP_SECONDS)
        high = sizes.pg_concurrencies[-1]
        others = [system for system, _ in self._others()]
        notes = [
            f"Server: {self.server.settings()}. Each run uses a fresh database created for it "
            "(CREATE DATABASE … TEMPLATE a database on which the system's own tool installed "
            "its schema: `dominus db upgrade`, `procrastinate schema --apply`, `pgq install`) "
            "and dropped after it.",
            "autovacuum is OFF on this server. DOMINUS workers vacuum the queue tables "
            "themselves when autovacuum is off (every 5 s they check job_queue's dead tuples; "
            "from ~1,000 on one worker runs VACUUM (ANALYZE), see "
            "src/dominus/jobs/sql/postgres_backend.py); procrastinate and pgqueuer do not. "
            "To start every drain from the same state, the benchmark runs VACUUM (ANALYZE) "
            "on the fresh database after enqueueing the drain's jobs (untimed), for all three "
            "systems; during the drain only DOMINUS vacuums.",
            f"Sizes: {sizes.single_enqueue:,} single enqueues and {sizes.batched_enqueue:,} "
            f"batched in batches of {sizes.batch_size:,} (after {sizes.warmup} untimed / one "
            f"untimed batch); {sizes.drain_jobs:,} jobs per drain, enqueued beforehand "
            f"(untimed); {sizes.latency_jobs} latency jobs enqueued one at a time "
            f"{low}–{high_gap} ms apart.",
            f"DOMINUS: {self.dominus.settings()}. Enqueue: JobQueue.enqueue_job / enqueue_jobs "
            "(Python API, synchronous, with the server clock as `dominus` uses it). Drain: "
            "`dominus worker --diagnostic-jobs --burst --concurrency N`, "
            "DOMINUS_LOG_LEVEL=WARNING; throughput = jobs / (max(finished_at) − "
            "min(started_at)) from job_queue; wall = process start → exit. The 1/2/4-process "
            "drains start their workers first (without --burst) and wait until all are "
            "registered and idle 1 s; the jobs, enqueued beforehand with run_at a day ahead "
            "and vacuumed, then become due at once (UPDATE run_at = created_at + NOTIFY in one "
            "transaction), so that the interpreters' start-up (~1 s of CPU each) does not "
            "overlap the drain; their wall time and CPU cover that commit → no job pending or "
            "running. Latency: `dominus worker --diagnostic-jobs "
            "--concurrency 2` (default poll interval 5 s; woken by LISTEN/NOTIFY), registered "
            "and idle 1 s; started_at − created_at.",
            "procrastinate: sync API `task.defer()` / `task.batch_defer(*[{}] * 1000)` with "
            "PsycopgConnector (App.open()); an `async def` no-op task. Drain: `procrastinate "
            "--log-level=warning --app=procrastinate_tasks.app worker --concurrency N "
            "--one-shot` (one-shot: exit when the queue is empty); throughput = jobs / (last "
            "`succeeded` − first `started` in procrastinate_events). Latency: the same worker "
            "at --concurrency 2 without --one-shot (defaults: LISTEN/NOTIFY on, polling every "
            "5 s), registered in procrastinate_workers and idle 1 s; `started` − `deferred` "
            "event times.",
            f"pgqueuer: `Queries.enqueue` over asyncpg (its default driver): a scalar call per "
            f"job / lists of {sizes.batch_size:,} (one statement); an `async def` no-op "
            f"entrypoint on a QueueManager. Worker: bench/pgqueuer_worker.py = `pgqueuer.run("
            f"factory, batch_size={sizes.pgqueuer_batch_size}, mode=drain|continuous)` on uvloop, "
            "what `pgq run` runs (`pgq run` 1.6.0 crashes at start with the pinned typer "
            "0.29.2: AttributeError: 'str' object has no attribute 'name'). pgqueuer has no "
            "concurrency limit by default (every dequeued job becomes an asyncio task); its "
            f"drain is set against DOMINUS at concurrency {high}. Throughput = jobs / (last "
            "`successful` − first `picked` in pgqueuer_log). Latency: continuous mode (default "
            "dequeue timeout 30 s; woken by its insert trigger's NOTIFY), up once it has run "
            "a first job, idle 1 s; `picked` − `queued` log times.",
            "All timestamps compared are the server's (DOMINUS's DatabaseClock extrapolates "
            "clock_timestamp(); the others use now() of the writing transaction).",
            "Ratio column: DOMINUS ÷ the better of the others (highest throughput, lowest "
            "time); above 1 means DOMINUS is faster for throughput, below 1 for times. 'Met' "
            "judges DOMINUS against the targets of the PostgreSQL issue: one-process drain ≥ "
            f"2× the better of the others (judged at concurrency {high}), batched enqueue ≥ "
            "40,000 jobs/s, p99 pickup latency < 15 ms, throughput rising with 2 and 4 worker "
            "processes until the database is the limit.",
            "CPU: worker process(es) (all threads) and the PostgreSQL server (postmaster, its "
            "children, and the backends it reaped) read from /proc every 50 ms during the drain "
            "and interpolated to the drain's span (first job start → last job end as recorded "
            "in the database; for the warm-start drains: the commit that makes the jobs due → "
            "no job pending or running), so process start-up and shut-down do not count; as a "
            "share of one core; the machine has "
            f"{os.cpu_count()} cores ({100 * (os.cpu_count() or 1)} %). Another client of the "
            "same server during the run would count in the PostgreSQL figure.",
        ]
        notes += self.notes + [f"FAILED {failure}" for failure in self.failures]
        drains = [(f"1 process, concurrency {c}", f"drain_c{c}") for c in sizes.pg_concurrencies]
        drains += [
            (
                f"{p} process{'es' if p > 1 else ''} × concurrency {sizes.process_concurrency}",
                f"drain_p{p}",
            )
            for p in sizes.processes
        ]
        cpu = report.cpu_table(self.results, drains, [DOMINUS, *others])
        extra = [
            "#### PostgreSQL: CPU during the drains (median; % of one core over the drain's span)",
            cpu,
        ]
        return Section(
            "PostgreSQL",
            self.results,
            report.postgres_rows(sizes, prefilled),
            others,
            notes,
            extra,
        )


# --- main --------------------------------------------------------------------------------------
def main(argv: list[str]) -> int:
    args = parse_args(argv)
    sizes = sizes_from(args)
    repeats = args.repeats or (1 if args.quick else 3)
    want_sqlite = args.backend in ("sqlite", "both")
    want_postgres = args.backend in ("postgresql", "both")
    server: PgServer | None = None
    server_text = None
    failures: list[str] = []
    if want_postgres:
        server = PgServer(args.pg_url)
        try:
            server_text = server.version()
        except Exception as error:
            message = (
                f"PostgreSQL server at {args.pg_url} not reachable ({error}); start it or run "
                "with --backend sqlite"
            )
            print(message, file=sys.stderr)
            failures.append(message)
            server = None
    environment = envinfo.describe(sqlite=want_sqlite, postgresql=server_text)
    source = envinfo.source_digest()
    for name, value in environment:
        print(f"{name}: {value}")
    print(flush=True)
    sections: list[Section] = []
    with tempfile.TemporaryDirectory(prefix="dominus-bench-", dir=args.tmpdir) as tmp:
        workdir = Path(tmp)
        if want_sqlite:
            sqlite_dir = workdir / "sqlite"
            sqlite_dir.mkdir()
            section, sqlite_failures = run_sqlite(args, sizes, repeats, sqlite_dir)
            sections.append(section)
            failures += sqlite_failures
        if server is not None:
            pg_dir = workdir / "postgresql"
            pg_dir.mkdir()
            try:
                section, pg_failures = run_postgres(args, sizes, repeats, pg_dir, server)
                sections.append(section)
                failures += pg_failures
            except Exception as error:
                traceback.print_exc()
                failures.append(f"PostgreSQL: {type(error).__name__}: {error}")
            finally:
                server.drop_all()
    environment.append(("load average at end", envinfo.load_average()))
    if envinfo.source_digest() != source:
        warning = "WARNING: src/ changed during the run; figures may mix code versions"
        print(warning)
        environment.append(("warning", warning))
    if not sections:
        print("nothing was measured", file=sys.stderr)
        return 1
    text = report.document(environment, sections, repeats)
    print()
    print(text)
    if args.output is not None:
        report.append(args.output, text)
        print(f"appended to {args.output}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
