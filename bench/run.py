#!/usr/bin/env python3
"""DOMINUS benchmark: SQLite, diag.noop jobs, compared with huey's SqliteHuey.

    python3 dev.py bench                       full run (3 repeats, medians; several minutes)
    python3 dev.py bench --quick               smoke run: small sizes, 1 repeat, no 1M-row step
    python3 dev.py bench --output bench/RESULTS.md
                                               also append a markdown section to that file

Measures enqueue throughput (single and batched, Python API), drain throughput of one worker
process at several concurrencies, enqueue→start latency with an idle worker, and the drain
again with 1,000,000 finished jobs in the table; then the same workload through huey. See
bench/README.md for how each figure is measured.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import envinfo
import report
from common import FULL, LATENCY_GAP_SECONDS, QUICK, Drain, Sizes, percentiles
from dominus_bench import DominusBench
from huey_bench import HueyBench
from report import DOMINUS, HUEY, Results

BENCH_DIR = Path(__file__).resolve().parent


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python3 dev.py bench", description="DOMINUS vs huey on SQLite (diag.noop jobs)."
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, 1 repeat, no 1M step")
    parser.add_argument("--repeats", type=int, help="runs per measurement (default 3; quick 1)")
    parser.add_argument("--output", type=Path, help="append a markdown section to this file")
    parser.add_argument("--drain-jobs", type=int, help="jobs per drain (default 20,000)")
    parser.add_argument(
        "--prefill-rows", type=int, help="finished jobs for the big-table step (0 skips it)"
    )
    parser.add_argument("--skip-huey", action="store_true", help="measure DOMINUS only")
    parser.add_argument(
        "--huey-synchronous",
        choices=("normal", "off"),
        default="normal",
        help="huey's PRAGMA synchronous: normal (as DOMINUS, default) or off (what "
        "fsync=False sets)",
    )
    parser.add_argument("--tmpdir", type=Path, help="where the temporary databases go")
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


class Bench:
    def __init__(self, sizes: Sizes, repeats: int, dominus: DominusBench, huey: HueyBench | None):
        self.sizes = sizes
        self.repeats = repeats
        self.dominus = dominus
        self.huey = huey
        self.results = Results()
        self.failures: list[str] = []
        self.notes: list[str] = []

    def repeat(self, label: str, measure: Callable[[int], str]) -> None:
        """Run `measure(run)` `repeats` times. A failed run is reported and left out of the
        medians; after two failures the step gives up."""
        failed = 0
        for run in range(1, self.repeats + 1):
            started = time.perf_counter()
            try:
                summary = measure(run)
            except Exception as error:
                traceback.print_exc()
                failed += 1
                first_line = (str(error).splitlines() or [""])[0]
                self.failures.append(f"{label}, run {run}: {type(error).__name__}: {first_line}")
                print(f"  {label} run {run}/{self.repeats}: FAILED ({error})", flush=True)
                if failed >= 2:
                    return
                continue
            took = time.perf_counter() - started
            print(f"  {label} run {run}/{self.repeats}: {summary}  [{took:.1f} s]", flush=True)

    def drain(self, key: str, system: str, result: Drain) -> str:
        self.results.add(key, system, result.throughput)
        self.results.add(f"{key}_wall", system, result.wall_seconds)
        return f"{result.throughput:,.0f} jobs/s, wall {result.wall_seconds:.2f} s"

    def latency(self, system: str, samples: list[float]) -> str:
        cuts = percentiles(samples)
        for name, value in cuts.items():
            self.results.add(f"latency_{name}", system, value)
        return ", ".join(f"{name} {value:.1f} ms" for name, value in cuts.items())

    def rate(self, key: str, system: str, value: float) -> str:
        self.results.add(key, system, value)
        return f"{value:,.0f} jobs/s"

    # --- the steps -----------------------------------------------------------------------
    def enqueue(self) -> None:
        sizes, ours = self.sizes, self.dominus
        print(f"enqueue: {sizes.single_enqueue:,} single, {sizes.batched_enqueue:,} batched")
        self.repeat(
            "DOMINUS enqueue single",
            lambda _: self.rate(
                "enqueue_single", DOMINUS, ours.enqueue_single(sizes.single_enqueue, sizes.warmup)
            ),
        )
        self.repeat(
            "DOMINUS enqueue batched",
            lambda _: self.rate(
                "enqueue_batched",
                DOMINUS,
                ours.enqueue_batched(sizes.batched_enqueue, sizes.batch_size),
            ),
        )
        if self.huey is not None:
            theirs = self.huey
            self.repeat(
                "huey enqueue single",
                lambda _: self.rate(
                    "enqueue_single",
                    HUEY,
                    theirs.enqueue_single(sizes.single_enqueue, sizes.warmup),
                ),
            )

    def drains(self) -> None:
        jobs = self.sizes.drain_jobs
        print(f"drain: {jobs:,} jobs, one worker process")
        theirs = self.huey
        for concurrency in self.sizes.concurrencies:
            key = f"drain_c{concurrency}"
            self.repeat(
                f"DOMINUS drain c={concurrency}",
                lambda _, c=concurrency, k=key: self.drain(k, DOMINUS, self.dominus.drain(jobs, c)),
            )
            if theirs is not None:
                self.repeat(
                    f"huey drain -w {concurrency}",
                    lambda _, c=concurrency, k=key: self.drain(k, HUEY, theirs.drain(jobs, c)),
                )

    def latencies(self) -> None:
        jobs = self.sizes.latency_jobs
        print(f"pickup latency: {jobs} jobs, idle worker, default polling")
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
        others = [c for c in self.sizes.concurrencies if c != 16]
        best = max(others, key=lambda c: self.results.median(f"drain_c{c}", DOMINUS) or 0.0)
        chosen = [16, best] if others else [16]
        print(f"big table: {rows:,} finished jobs, drain {jobs:,} at concurrency {chosen}")
        try:
            took = self.dominus.build_prefilled(rows)
        except Exception as error:
            traceback.print_exc()
            self.failures.append(f"prefill: {type(error).__name__}: {error}")
            return []
        self.notes.append(f"{rows:,} completed rows were inserted with raw sqlite3 in {took:.1f} s")
        try:
            for concurrency in chosen:
                key = f"drain1m_c{concurrency}"
                self.repeat(
                    f"DOMINUS drain c={concurrency} with {rows:,} finished rows",
                    lambda _, c=concurrency, k=key: self.drain(
                        k, DOMINUS, self.dominus.drain(jobs, c, prefilled=True)
                    ),
                )
                full = self.results.median(key, DOMINUS)
                empty = self.results.median(f"drain_c{concurrency}", DOMINUS)
                if full is not None and empty:
                    self.results.add(f"drain1m_c{concurrency}_ratio", DOMINUS, full / empty)
        finally:
            self.dominus.drop_prefilled()
        return chosen


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.drain_jobs is not None:
        sizes = replace(sizes, drain_jobs=args.drain_jobs)
    if args.prefill_rows is not None:
        sizes = replace(sizes, prefill_rows=args.prefill_rows)
    repeats = args.repeats or (1 if args.quick else 3)
    environment = envinfo.describe()
    source = envinfo.source_digest()
    for name, value in environment:
        print(f"{name}: {value}")
    print(flush=True)
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(prefix="dominus-bench-", dir=args.tmpdir) as tmp:
        workdir = Path(tmp)
        huey = (
            None
            if args.skip_huey
            else HueyBench(workdir, bin_dir, BENCH_DIR, args.huey_synchronous)
        )
        bench = Bench(sizes, repeats, DominusBench(workdir, bin_dir), huey)
        bench.notes += notes(sizes, bench, args.huey_synchronous)
        bench.enqueue()
        bench.drains()
        bench.latencies()
        prefilled = bench.prefilled()
    bench.notes += [f"FAILED {failure}" for failure in bench.failures]
    if envinfo.source_digest() != source:
        warning = "WARNING: src/ changed during the run; figures may mix code versions"
        print(warning)
        bench.notes.append(warning)
    text = report.document(
        environment, bench.results, report.table_rows(sizes, prefilled), repeats, bench.notes
    )
    print()
    print(text)
    if args.output is not None:
        report.append(args.output, text)
        print(f"appended to {args.output}")
    return 1 if bench.failures else 0


def notes(sizes: Sizes, bench: Bench, huey_synchronous: str) -> list[str]:
    low, high = (round(gap * 1000) for gap in LATENCY_GAP_SECONDS)
    lines = [
        f"Sizes: {sizes.single_enqueue:,} single enqueues and {sizes.batched_enqueue:,} batched "
        f"(after {sizes.warmup} untimed); {sizes.drain_jobs:,} jobs per drain; "
        f"{sizes.latency_jobs} latency jobs enqueued one at a time {low}–{high} ms apart.",
        f"DOMINUS SQLite: {bench.dominus.settings()} (set by dominus.db.engine).",
        "Drain throughput: DOMINUS = jobs / (max(finished_at) − min(started_at)) read from "
        "job_queue after a `dominus worker --burst` run; huey = jobs / (moment the last result "
        "was seen stored, polled every 5 ms − earliest task start). Wall time: worker process "
        "start → exit (DOMINUS) / consumer start → last result seen (huey has no burst mode).",
        "Pickup latency: worker/consumer at concurrency 2, default polling, idle 1 s after it is "
        "up; DOMINUS = started_at − created_at; huey = time.time() in the task − time.time() "
        "just before the task call.",
        "DOMINUS/huey: for throughput, above 1 means DOMINUS is faster; for times (wall, "
        "latency), below 1 means DOMINUS is faster. 'Met' judges DOMINUS against its targets.",
    ]
    if bench.huey is not None:
        how = (
            "raised from OFF (what fsync=False sets) to NORMAL by the benchmark, to match DOMINUS"
            if huey_synchronous == "normal"
            else "huey's own fsync=False setting, less durable than DOMINUS"
        )
        lines.append(
            f"huey SQLite: {bench.huey.settings()} — SqliteStorage sets journal_mode=wal itself; "
            f"synchronous {how}. Consumer: huey_consumer huey_tasks.huey -w N -k thread -q "
            "(default polling: -d 0.1 -m 10 -b 1.15; results stored, as DOMINUS stores them)."
        )
    return lines


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
