#!/usr/bin/env python3
"""`dominus score --from-file` end to end: 10,000 names appraised in one process with 10,000
comparable sales loaded (COMPS_DATA_PATH), as a user runs it, timed as a whole process.

The names and sales are made up here from common English words (no real sales are used), with
prices drawn from a log-normal spread; the figure is the time, not the values.

    .venv/bin/python bench/score_from_file.py [--names 10000] [--sales 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import wordninja

TLDS = ["com"] * 6 + ["net", "org", "io", "co", "ai", "de"]
VENUES = ["GoDaddy", "Sedo", "Afternic", "DropCatch", "NameJet", "Dynadot"]


def words(count: int, rng: random.Random) -> list[str]:
    vocabulary = [word for word in wordninja.DEFAULT_LANGUAGE_MODEL._wordcost if word.isalpha()]
    common = [word for word in vocabulary[:20_000] if 3 <= len(word) <= 9]
    return [
        rng.choice(common) + (rng.choice(common) if rng.random() < 0.6 else "")
        for _ in range(count)
    ]


def write_inputs(directory: Path, names: int, sales: int, rng: random.Random) -> tuple[Path, Path]:
    names_file = directory / "names.txt"
    names_file.write_text("\n".join(f"{label}.{rng.choice(TLDS)}" for label in words(names, rng)))
    comps = directory / "comps.csv"
    today = date(2026, 12, 1)
    rows = ["domain,price,currency,sale_date,venue"]
    for label in words(sales, rng):
        price = round(min(5e6, max(100.0, rng.lognormvariate(6.5, 1.3))), 2)
        sold = today - timedelta(days=rng.randrange(3 * 365))
        rows.append(f"{label}.{rng.choice(TLDS)},{price},USD,{sold},{rng.choice(VENUES)}")
    comps.write_text("\n".join(rows) + "\n")
    return names_file, comps


def run_once(directory: Path, names_file: Path, comps: Path) -> float:
    database = directory / "dominus.db"
    env = os.environ | {
        "DATABASE_URL": f"sqlite:///{database}",
        "COMPS_DATA_PATH": str(comps),
        "DOMINUS_PROVIDERS": "real",  # no lookups: availability is not checked
    }
    dominus = [sys.executable, "-m", "dominus.cli.main"]
    if not database.exists():
        subprocess.run([*dominus, "db", "upgrade"], env=env, check=True, capture_output=True)
    started = time.monotonic()
    subprocess.run(
        [*dominus, "score", "--from-file", str(names_file), "--json"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", type=int, default=10_000)
    parser.add_argument("--sales", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(2026)
    with tempfile.TemporaryDirectory(prefix="dominus-score-") as temp:
        directory = Path(temp)
        names_file, comps = write_inputs(directory, args.names, args.sales, rng)
        times = [run_once(directory, names_file, comps) for _ in range(args.repeats)]
    print(
        f"score --from-file: {args.names:,} names, {args.sales:,} comparable sales: "
        f"median {statistics.median(times):.1f} s (runs: {', '.join(f'{t:.1f}' for t in times)})"
    )


if __name__ == "__main__":
    main()
