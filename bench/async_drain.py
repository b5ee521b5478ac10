"""Drain throughput on SQLite with a sync handler and with an `async def` one (ADR 0029).

    .venv/bin/python bench/async_drain.py [--jobs N] [--concurrencies 1,16,100] [--repeats N]

For each concurrency, `--jobs` no-op jobs drained by one `dominus worker --burst` process, as
the main benchmark's "Drain, concurrency N" (bench/README.md): once `diag.noop` (a plain
function on the worker's handler threads), once `diag.async_noop` (an `async def` on its event
loop). Jobs/s is jobs ÷ (last finished_at − first started_at); medians over `--repeats`. Prints
the machine first (bench/envinfo.py). Not part of `dev.py bench`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import envinfo
from dominus_bench import DominusBench

KINDS = {"sync (diag.noop)": "diag.noop", "async (diag.async_noop)": "diag.async_noop"}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs per drain")
    parser.add_argument("--concurrencies", default="1,16,100", help="comma-separated")
    parser.add_argument("--repeats", type=int, default=1, help="drains per figure (median)")
    parser.add_argument("--tmpdir", type=Path, help="where the database files go")
    args = parser.parse_args(argv)
    concurrencies = [int(value) for value in args.concurrencies.split(",")]
    for key, value in envinfo.describe():
        if key != "huey":
            print(f"- {key}: {value}")
    print()
    print(f"{args.jobs:,} jobs per drain, median of {args.repeats}")
    print("| handler | " + " | ".join(f"concurrency {c}" for c in concurrencies) + " |")
    print("|---|" + "---:|" * len(concurrencies))
    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(dir=args.tmpdir, prefix="dominus-async-bench-") as workdir:
        bench = DominusBench(Path(workdir), bin_dir)
        for label, job_type in KINDS.items():
            figures = []
            for concurrency in concurrencies:
                runs = [
                    bench.drain(args.jobs, concurrency, job_type=job_type).throughput
                    for _ in range(args.repeats)
                ]
                figures.append(f"{statistics.median(runs):,.0f} jobs/s")
            print(f"| {label} | " + " | ".join(figures) + " |", flush=True)
    print(f"\nload average at the end: {envinfo.load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
