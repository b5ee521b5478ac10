"""Drain throughput of two source trees of DOMINUS, interleaved run by run (ADR 0060).

    .venv/bin/python bench/ab_drain.py --before /tmp/base/src --after src \\
        [--jobs 20000] [--repeats 3] [--sqlite 1,4] [--postgresql 16] [--pg-url URL]

What a change to the completion path costs: each figure is the main benchmark's "Drain,
concurrency N" (bench/README.md: `jobs` no-op jobs drained by one `dominus worker --burst`
process, jobs ÷ (last finished_at − first started_at)), once with the worker importing the
`--before` tree and once the `--after` one (its PYTHONPATH), alternately (B1 A1 B2 A2 …), so
both meet the same spells of the machine's load; beside it the CPU time spent per job. Prints
the medians, their ratios and the load average before and after. The two trees must share the
schema (the database is migrated by this process's DOMINUS). Not part of `dev.py bench`.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import envinfo
from common import Drain
from dominus_bench import DominusBench
from dominus_pg_bench import DominusPgBench
from pg import DEFAULT_URL, PgServer

TREES = ("before", "after")


def concurrencies(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the first tree's src/")
    parser.add_argument("--after", type=Path, required=True, help="the second tree's src/")
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs per drain")
    parser.add_argument("--repeats", type=int, default=3, help="drains per figure (median)")
    parser.add_argument("--sqlite", default="1,4", help="SQLite concurrencies ('' for none)")
    parser.add_argument("--postgresql", default="16", help="PostgreSQL concurrencies, one process")
    parser.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", DEFAULT_URL))
    args = parser.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    print(f"load average at the start: {envinfo.load_average()}")
    print(f"{args.jobs:,} jobs per drain, median of {args.repeats}, interleaved")
    bin_dir = Path(sys.executable).parent
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dominus-ab-drain-") as workdir:
        sqlite = DominusBench(Path(workdir), bin_dir)
        for concurrency in concurrencies(args.sqlite):
            drain = _drain_of(sqlite, args.jobs, concurrency)
            label = f"SQLite c={concurrency}"
            rows.append(_compare(label, trees, args.repeats, args.jobs, drain))
        if concurrencies(args.postgresql):
            server = PgServer(args.pg_url)
            try:
                postgres = DominusPgBench(server, Path(workdir), bin_dir)
                for concurrency in concurrencies(args.postgresql):
                    drain = _drain_of(postgres, args.jobs, concurrency)
                    label = f"PostgreSQL c={concurrency}"
                    rows.append(_compare(label, trees, args.repeats, args.jobs, drain))
            finally:
                server.drop_all()
    print(
        "\n| drain | before (jobs/s) | after (jobs/s) | after ÷ before "
        "| before (µs CPU a job) | after (µs CPU a job) | after ÷ before |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print(f"\nload average at the end: {envinfo.load_average()}")
    return 0


def _drain_of(bench: DominusBench | DominusPgBench, jobs: int, c: int) -> Callable[[], Drain]:
    return lambda: bench.drain(jobs, c)


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _compare(
    label: str, trees: dict[str, Path], repeats: int, jobs: int, drain: Callable[[], Drain]
) -> str:
    """A table row: median jobs/s of each tree, and the CPU each spent per job: the worker
    process's whole life (start-up included, the same for both), plus on PostgreSQL the
    server's during the drain. CPU time moves far less than wall time with a neighbour's load."""
    speeds: dict[str, list[float]] = {tree: [] for tree in TREES}
    costs: dict[str, list[float]] = {tree: [] for tree in TREES}
    for run in range(1, repeats + 1):
        for tree in TREES:
            os.environ["PYTHONPATH"] = str(trees[tree])  # what the worker process imports
            cpu_before = _children_cpu_seconds()
            result = drain()
            cpu = _children_cpu_seconds() - cpu_before + (result.db_cpu_seconds or 0.0)
            speeds[tree].append(result.throughput)
            costs[tree].append(cpu / jobs * 1e6)
            print(
                f"  {label} {tree} run {run}: {result.throughput:,.0f} jobs/s, "
                f"{costs[tree][-1]:,.0f} µs CPU a job",
                flush=True,
            )
    before, after = (statistics.median(speeds[tree]) for tree in TREES)
    cost_before, cost_after = (statistics.median(costs[tree]) for tree in TREES)
    return (
        f"| {label} | {before:,.0f} | {after:,.0f} | {after / before:.3f} "
        f"| {cost_before:,.0f} | {cost_after:,.0f} | {cost_after / cost_before:.3f} |"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
