"""The worker's hot transaction alone (complete a batch, claim the next), for two source trees,
interleaved: what a change to the completion statements costs, measured where a loaded machine
disturbs it least (ADR 0060).

    .venv/bin/python bench/settle_ab.py --before /tmp/base/src --after src \\
        [--settles 1000] [--rounds 7] [--batches 1,16] [--pg-url URL]

Each round runs, for each tree in turn, a fresh process importing that tree (its PYTHONPATH;
the two must share the schema) on a fresh database: `settles` × `batch` diag.noop jobs
enqueued, then `store.settle([Completed …], claim_for=…)` in a loop, `batch` jobs at a time, as
a worker at concurrency `batch` settles a full tick (on the loop's own connection; on
PostgreSQL one pipelined round trip). Two figures, µs a job: the wall time of the fastest
chunk of 100 settles (a neighbour's load only ever adds time, so the minimum comes nearest the
cost), and the CPU time spent, by the process and, on PostgreSQL, by the server processes of
its own database (/proc), which a loaded machine moves far less than wall time. The figure per
tree is the median over rounds. Not part of `dev.py bench`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

from dominus.db.engine import create_database_engine
from dominus.jobs import SqlJobStore
from dominus.jobs.clock import utc_now
from dominus.jobs.model import ClaimRequest, Completed, NewJob
from dominus.schema.migrate import upgrade

TREES = ("before", "after")
CHUNK = 100


def backend_cpu_seconds(database: str) -> float:
    """CPU time used so far by the PostgreSQL server processes serving `database` (this
    process's connections: the database is its own)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
            if not command.startswith("postgres: ") or f" {database} " not in command:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def child(url: str, settles: int, batch: int) -> None:
    engine = create_database_engine(url)
    upgrade(engine)
    database = engine.url.database if engine.dialect.name == "postgresql" else None
    store = SqlJobStore(engine)
    now = utc_now()
    store.enqueue([NewJob("diag.noop", {}, 0, 3, now) for _ in range(settles * batch)], now)
    request = ClaimRequest("bench:1:ab", ["diag.noop"], batch)
    claimed = store.claim(request.worker_id, request.job_types, batch, now)
    chunks: list[float] = []
    settled = jobs = 0
    server_before = backend_cpu_seconds(database) if database else 0.0
    cpu_before = time.process_time()
    started = time.perf_counter()
    while claimed:
        outcomes = [
            Completed(job.claim, job_type=job.job_type, duration_seconds=0.001, pickup_seconds=0.01)
            for job in claimed
        ]
        jobs += len(outcomes)
        _, claimed = store.settle(outcomes, utc_now(), claim_for=request)
        settled += 1
        if settled % CHUNK == 0:
            elapsed = time.perf_counter() - started
            chunks.append(elapsed / (CHUNK * batch) * 1e6)
            started = time.perf_counter()
    client = (time.process_time() - cpu_before) / jobs * 1e6
    server = (backend_cpu_seconds(database) - server_before) / jobs * 1e6 if database else 0.0
    engine.dispose()
    print(json.dumps({"wall": min(chunks), "client_cpu": client, "server_cpu": server}))


def run_child(tree: Path, url: str, settles: int, batch: int) -> dict[str, float]:
    """µs a job: the fastest chunk's wall time, this tree's CPU and the server's."""
    env = {**os.environ, "PYTHONPATH": str(tree), "DOMINUS_LOG_LEVEL": "WARNING"}
    command = [sys.executable, __file__, "--child", url, "--settles", str(settles)]
    command += ["--batches", str(batch)]
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    figures: dict[str, float] = json.loads(output.splitlines()[-1])
    return figures


def databases(pg_url: str | None, workdir: Path) -> list[tuple[str, Any]]:
    """(label, a factory of fresh database URLs with their clean-up)."""
    found: list[tuple[str, Any]] = []
    counter = iter(range(10**6))

    def sqlite() -> tuple[str, Any]:
        path = workdir / f"settle-{next(counter)}.db"
        return f"sqlite:///{path}", lambda: [p.unlink(missing_ok=True) for p in workdir.iterdir()]

    found.append(("SQLite", sqlite))
    if pg_url:

        def postgres() -> tuple[str, Any]:
            name = f"dominus_settle_ab_{os.getpid()}_{next(counter)}"
            with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{name}"')

            def drop() -> None:
                with psycopg.connect(f"{pg_url}/postgres", autocommit=True) as admin:
                    admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')

            return f"{pg_url.replace('postgresql://', 'postgresql+psycopg://', 1)}/{name}", drop

        found.append(("PostgreSQL", postgres))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the first tree's src/")
    parser.add_argument("--after", type=Path, help="the second tree's src/")
    parser.add_argument("--settles", type=int, default=1_000, help="transactions per process")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batches", default="1,16", help="jobs settled per transaction")
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    batches = [int(part) for part in args.batches.split(",")]
    if args.child:
        child(args.child, args.settles, batches[0])
        return 0
    if args.before is None or args.after is None:
        parser.error("--before and --after are required")
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    print(f"load average at the start: {os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="dominus-settle-ab-") as workdir:
        for label, fresh in databases(None if args.no_pg else args.pg_url, Path(workdir)):
            for batch in batches:
                runs: dict[str, list[dict[str, float]]] = {tree: [] for tree in TREES}
                for round_number in range(1, args.rounds + 1):
                    for tree in TREES:
                        url, clean = fresh()
                        try:
                            runs[tree].append(run_child(trees[tree], url, args.settles, batch))
                        finally:
                            clean()
                    print(
                        f"  {label} batch {batch} round {round_number}: "
                        + "; ".join(f"{tree} {_figures(runs[tree][-1])}" for tree in TREES),
                        flush=True,
                    )
                rows.append(_row(f"{label}, {batch} a transaction", runs))
    print(
        "\n| settle | wall before | wall after | ratio | CPU before | CPU after | ratio |"
        "\n|---|---:|---:|---:|---:|---:|---:|"
    )
    print("\n".join(rows))
    print("(µs a job; CPU: this process's and, on PostgreSQL, its server processes')")
    print(f"\nload average at the end: {os.getloadavg()}")
    return 0


def _cpu(figures: dict[str, float]) -> float:
    return figures["client_cpu"] + figures["server_cpu"]


def _figures(figures: dict[str, float]) -> str:
    return f"wall {figures['wall']:.1f}, CPU {_cpu(figures):.1f} µs/job"


def _row(label: str, runs: dict[str, list[dict[str, float]]]) -> str:
    walls = [statistics.median(run["wall"] for run in runs[tree]) for tree in TREES]
    cpus = [statistics.median(_cpu(run) for run in runs[tree]) for tree in TREES]
    return (
        f"| {label} | {walls[0]:.1f} | {walls[1]:.1f} | {walls[1] / walls[0]:.3f} "
        f"| {cpus[0]:.1f} | {cpus[1]:.1f} | {cpus[1] / cpus[0]:.3f} |"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
