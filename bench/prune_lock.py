"""How long PRUNE keeps other writers waiting on SQLite while it deletes a million finished jobs.

    .venv/bin/python bench/prune_lock.py [--jobs 1000000] [--batch-size 1000]
        [--output bench/RESULTS.md | --no-write]

A migrated SQLite file (WAL, as DOMINUS opens it) is filled with finished jobs, all past
JOB_RETENTION_DAYS, one in a hundred with an event (a bulk insert through the driver). Then
`dominus.maintenance.prune` deletes them while a probe thread does what a worker or the API
does: BEGIN IMMEDIATE, one small insert, COMMIT, over and over. The probe records how long each
BEGIN IMMEDIATE waited for the write lock; the pruner's write steps are timed too (from asking
for the lock to the commit). Reported: max, p99 and median of both, steps, rows and time, and
the machine. The issue's target: no writer waits more than about 100 ms at a time.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import envinfo
from dominus.db.engine import create_database_engine
from dominus.maintenance import prune_rules
from dominus.maintenance.prune import prune
from dominus.maintenance.prune_rules import Retention
from dominus.schema.migrate import upgrade

T = TypeVar("T")
SEED_CHUNK = 50_000
PROBE_GAP_SECONDS = 0.001


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "RESULTS.md")
    parser.add_argument("--no-write", action="store_true", help="Print only.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dominus-prune-bench-") as scratch:
        path = Path(scratch) / "bench.db"
        figures = measure(path, args.jobs, args.batch_size)
    report = render(args, figures)
    print(report)
    if not args.no_write:
        with args.output.open("a", encoding="utf-8") as results:
            results.write("\n" + report)
    return 0


def measure(path: Path, jobs: int, batch_size: int) -> dict[str, Any]:
    engine = create_database_engine(f"sqlite:///{path}")
    upgrade(engine)
    now = datetime.now(UTC)
    started = time.monotonic()
    events = seed(path, jobs, now - timedelta(days=30))
    seeded_in = time.monotonic() - started

    write_steps: list[float] = []
    original = prune_rules.write_step

    def timed_write_step(engine_: Any, work: Callable[[Any], T]) -> T:
        began = time.perf_counter()
        try:
            return original(engine_, work)
        finally:
            write_steps.append(time.perf_counter() - began)

    prune_rules.write_step = timed_write_step  # type: ignore[assignment]
    probe = WriteProbe(path)
    probe.start()
    time.sleep(0.5)  # the probe's baseline before the prune starts
    started = time.monotonic()
    report = prune(engine, Retention(7, 30, 180), now, batch_size=batch_size)
    pruned_in = time.monotonic() - started
    probe.stop()
    prune_rules.write_step = original  # type: ignore[assignment]
    engine.dispose()
    return {
        "jobs": jobs,
        "events": events,
        "batch_size": batch_size,
        "seeded_in": seeded_in,
        "pruned_in": pruned_in,
        "counts": report.counts,
        "steps": report.steps,
        "probe": probe.waits,
        "write_steps": write_steps,
        "database_bytes": path.stat().st_size,
    }


def seed(path: Path, jobs: int, finished: datetime) -> int:
    """`jobs` completed jobs finished at `finished`, an event for one in a hundred; straight
    through the driver in a few big transactions. Returns the number of events."""
    stamp = finished.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=OFF")
    row = ("bench.noop", "{}", "completed", 1, stamp, stamp, stamp, stamp, stamp, '{"ok": true}')
    events = 0
    for first in range(0, jobs, SEED_CHUNK):
        size = min(SEED_CHUNK, jobs - first)
        connection.execute("BEGIN")
        connection.executemany(
            "INSERT INTO job_queue (job_type, payload, status, attempts, run_at, created_at, "
            "updated_at, started_at, finished_at, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row for _ in range(size)),
        )
        connection.execute(
            "INSERT INTO job_events (job_id, kind, at, attempt, message) "
            "SELECT id, 'failed', ?, 1, 'a retried attempt' FROM job_queue "
            "WHERE id > ? AND id <= ? AND id % 100 = 0",
            (stamp, first, first + size),
        )
        connection.execute("COMMIT")
        events += size // 100
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return events


class WriteProbe:
    """Another writer: BEGIN IMMEDIATE, a tiny insert, COMMIT, in a loop; records each wait."""

    def __init__(self, path: Path) -> None:
        self._connection = sqlite3.connect(
            path, isolation_level=None, timeout=60, check_same_thread=False
        )
        self._connection.execute("PRAGMA synchronous=NORMAL")
        self._connection.execute("CREATE TABLE IF NOT EXISTS bench_probe (id INTEGER PRIMARY KEY)")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.waits: list[float] = []

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(120)
        self._connection.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            began = time.perf_counter()
            self._connection.execute("BEGIN IMMEDIATE")
            self.waits.append(time.perf_counter() - began)
            self._connection.execute("INSERT INTO bench_probe DEFAULT VALUES")
            self._connection.execute("COMMIT")
            self._stop.wait(PROBE_GAP_SECONDS)


def _quantile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def render(args: argparse.Namespace, figures: dict[str, Any]) -> str:
    unrelated = {"huey"}
    machine = [(k, v) for k, v in envinfo.describe() if k not in unrelated]
    deleted = sum(figures["counts"].values())
    lines = [
        f"## {datetime.now(UTC).isoformat(timespec='seconds')} — prune lock hold on SQLite "
        f"{figures['jobs']:,} finished jobs",
        "",
        *(f"- {key}: {value}" for key, value in machine),
        "",
        f"Seeded {figures['jobs']:,} completed jobs and {figures['events']:,} events in "
        f"{figures['seeded_in']:.1f} s (database {figures['database_bytes'] / 2**20:,.0f} MiB); "
        f"pruned {deleted:,} rows ({json.dumps(figures['counts'])}) in {figures['steps']:,} "
        f"steps of at most {figures['batch_size']:,} jobs, {figures['pruned_in']:.1f} s "
        f"({deleted / figures['pruned_in']:,.0f} rows/s).",
        "",
        "| measured | count | max (ms) | p99 (ms) | median (ms) |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, values in (
        ("another writer's wait for the lock (BEGIN IMMEDIATE)", figures["probe"]),
        ("a prune write step (lock wait + delete + commit)", figures["write_steps"]),
    ):
        lines.append(
            f"| {label} | {len(values):,} | {1000 * max(values):.1f} | "
            f"{1000 * _quantile(values, 0.99):.1f} | {1000 * statistics.median(values):.1f} |"
        )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
