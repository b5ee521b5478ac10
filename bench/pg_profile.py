"""Where the PostgreSQL server spends a DOMINUS drain: `pg_stat_statements` and sampled wait
events, for 1, 2 and 4 worker processes (to explain how throughput scales with processes).

Runs on a throwaway cluster of its own (`initdb`, as the chaos harness does), started with
`pg_stat_statements` preloaded and `track_io_timing` on, so the shared server's configuration is
never touched. Each drain is `DominusPgBench.drain_warm`: the workers start first and idle; the
jobs, enqueued a day ahead, become due in one commit. Between that commit and the end of the
drain this script resets the statement statistics, then reads `pg_stat_activity` every poll
(about every 10 ms) and classifies each backend of the database: on CPU, waiting on a named
event, or idle waiting for its client (the worker). Prints markdown.

    .venv/bin/python bench/pg_profile.py --jobs 20000 --processes 1,2,4
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

from tests.e2e.throwaway_postgres import ThrowawayPostgres  # noqa: E402

import envinfo  # noqa: E402
from dominus_pg_bench import DominusPgBench  # noqa: E402
from pg import PgServer, postgres_cpu_seconds  # noqa: E402

# The statements of this script and of the bench's drain (the commit that makes the jobs due,
# its "drained yet?" poll): not the workers'.
_OWN = (
    "SELECT EXISTS (SELECT FROM job_queue WHERE status IN",
    "UPDATE job_queue SET run_at = created_at",
    "SELECT backend_type, state, wait_event_type",
    "SELECT pg_stat_statements_reset()",
    "SELECT pg_notify(",
)

_ACTIVITY = """
    SELECT backend_type, state, wait_event_type, wait_event, query
      FROM pg_stat_activity
     WHERE pid <> pg_backend_pid() AND (datname = %s OR datname IS NULL)
"""

_STATEMENTS = """
    SELECT query, calls, total_exec_time, rows, shared_blks_hit + shared_blks_read,
           shared_blks_dirtied, wal_bytes
      FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)
     ORDER BY total_exec_time DESC
"""


_IDLE = {
    "idle": "idle: waiting for the worker's next statement",
    "idle in transaction": "idle in transaction: waiting for the worker",
}


@dataclass
class Profile:
    """What one drain's server did: samples of its backends and its statements."""

    samples: int = 0
    states: Counter[str] = field(default_factory=Counter)
    statements: list[tuple[Any, ...]] = field(default_factory=list)
    server_cpu: float = 0.0


class ServerWatcher:
    """The `DrainObserver` of one drain (see `DominusPgBench.drain_warm`)."""

    def __init__(self, server: ThrowawayPostgres) -> None:
        self.server = server
        self.profile = Profile()
        self._connection: psycopg.Connection[Any] | None = None
        self._database = ""
        self._cpu_before = 0.0

    def begin(self, database: str) -> None:
        self._database = database
        self._connection = psycopg.connect(self.server.conninfo(database), autocommit=True)
        self._connection.execute("SELECT pg_stat_statements_reset()")
        self._cpu_before = postgres_cpu_seconds(self.server.postmaster_pid()) or 0.0

    def tick(self) -> None:
        assert self._connection is not None
        rows = self._connection.execute(_ACTIVITY, (self._database,)).fetchall()
        self.profile.samples += 1
        for backend_type, state, wait_type, wait_event, query in rows:
            where = _classify(backend_type, state, wait_type, wait_event, query or "")
            if where is not None:
                self.profile.states[where] += 1

    def end(self) -> None:
        assert self._connection is not None
        cpu_after = postgres_cpu_seconds(self.server.postmaster_pid()) or 0.0
        self.profile.server_cpu = cpu_after - self._cpu_before
        rows = self._connection.execute(_STATEMENTS, (self._database,)).fetchall()
        self.profile.statements = [row for row in rows if not _is_own(row[0])]
        self._connection.close()


def _is_own(query: str) -> bool:
    return " ".join(query.split()).startswith(_OWN)


def _classify(
    backend_type: str, state: str | None, wait_type: str | None, wait_event: str | None, query: str
) -> str | None:
    """Where one backend was at one sample; None for what is not the drain's (the bench's own
    connections, background processes sleeping between rounds)."""
    if backend_type == "client backend":
        if _is_own(query):
            return None
        if state == "active":
            return "active: on CPU" if wait_type is None else f"active: {wait_type} {wait_event}"
        return _IDLE.get(state or "", f"client backend {state}")
    if wait_type in (None, "Activity"):  # a background process between rounds
        return None if wait_type == "Activity" else f"[{backend_type}] on CPU"
    return f"[{backend_type}] {wait_type} {wait_event}"


def _one_line(query: str, width: int = 110) -> str:
    text = " ".join(query.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def report(processes: int, concurrency: int, jobs: int, throughput: float, cpu: Any,
           profile: Profile) -> str:  # fmt: skip
    worker_us = 1e6 * cpu.worker_cpu_seconds / jobs
    server_us = 1e6 * profile.server_cpu / jobs
    lines = [
        f"### {processes} process{'es' if processes > 1 else ''} × concurrency {concurrency}: "
        f"{throughput:,.0f} jobs/s",
        "",
        f"CPU per job: workers {worker_us:.0f} µs, server {server_us:.0f} µs "
        f"(over {cpu.cpu_span_seconds:.2f} s: workers {100 * cpu.worker_cpu_seconds / cpu.cpu_span_seconds:.0f} %, "  # noqa: E501
        f"server {100 * profile.server_cpu / cpu.cpu_span_seconds:.0f} % of a core).",
        "",
        f"Backends of the database, {profile.samples} samples (average backends in each state):",
        "",
        "| state | share | backends |",
        "|---|---:|---:|",
    ]
    total = sum(profile.states.values()) or 1
    for where, count in profile.states.most_common(12):
        share = 100 * count / total
        lines.append(f"| {where} | {share:.1f} % | {count / max(profile.samples, 1):.2f} |")
    exec_ms = sum(row[2] for row in profile.statements) or 1.0
    lines += [
        "",
        f"Statements: {exec_ms:,.0f} ms of execution in all, {1000 * exec_ms / jobs:.0f} µs per "
        "job (execution only: not parse, bind, protocol or the wait for the client).",
        "",
        "| statement | calls per job | share of execution | mean µs | rows per call | "
        "buffers per call | dirtied per call | WAL bytes per call |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for query, count, total_ms, rows, buffers, dirtied, wal in profile.statements[:10]:
        calls = max(count, 1)
        lines.append(
            f"| `{_one_line(query)}` | {calls / jobs:.3f} | {100 * total_ms / exec_ms:.1f} % | "
            f"{1000 * total_ms / calls:.0f} | {rows / calls:.1f} | {buffers / calls:.1f} | "
            f"{dirtied / calls:.2f} | {float(wal) / calls:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--processes", default="1,2,4", help="comma-separated (default 1,2,4)")
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    counts = [int(part) for part in args.processes.split(",") if part.strip()]
    machine = [
        (name, value)
        for name, value in envinfo.describe(sqlite=False)
        if name in ("date", "command", "CPU", "cores", "load average at start", "DOMINUS")
    ]
    print("\n".join(f"- {name}: {value}" for name, value in machine), "\n", flush=True)
    server = ThrowawayPostgres()
    server.settings = {
        "shared_preload_libraries": "pg_stat_statements",
        "pg_stat_statements.track": "all",
        "track_io_timing": "on",
    }
    try:
        server.init()
        server.start()
        print(f"throwaway cluster on port {server.port}: {server.base}", flush=True)
        url = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
        with psycopg.connect(server.conninfo("postgres"), autocommit=True) as admin:
            admin.execute("CREATE EXTENSION pg_stat_statements")
        pg = PgServer(url)
        with tempfile.TemporaryDirectory(prefix="dominus-pg-profile-") as workdir:
            bench = DominusPgBench(pg, Path(workdir), Path(sys.executable).parent)
            # pg_stat_statements is per database only in what it reports: create the view in
            # the template so that every drain's copy has it.
            with psycopg.connect(server.conninfo(bench.template), autocommit=True) as template:
                template.execute("CREATE EXTENSION pg_stat_statements")
            for processes in counts:
                watcher = ServerWatcher(server)
                started = time.perf_counter()
                drain = bench.drain_warm(args.jobs, args.concurrency, processes, watcher)
                shape = (processes, args.concurrency, args.jobs)
                text = report(*shape, drain.throughput, drain, watcher.profile)
                print(text, f"\n\n[{time.perf_counter() - started:.1f} s]\n", flush=True)
            pg.drop_all()
    finally:
        server.destroy()


if __name__ == "__main__":
    main()
