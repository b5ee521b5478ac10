"""The in-process claim with and without concurrency keys (ADR 0052): claim 10 among 50,000
pending jobs, 300 times (the median), through `store.claim` and through the worker loop's settle (on
PostgreSQL: one pipeline), on SQLite and PostgreSQL. Also prints the claim's EXPLAIN.

    PYTHONPATH=src python bench/claim_keys.py [--pg-url URL] [--scenario NAME ...] [--explain]

Runs against whichever `dominus` is on the path, so the same script measures main (which has no
keys: only the `plain` scenario) and a branch. Every database it makes is named
`dominus_claimkeys_<pid>` (or a file in a temporary directory) and dropped afterwards.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from dominus.db.engine import create_database_engine
from dominus.jobs import SqlJobStore
from dominus.jobs.model import ClaimRequest, NewJob
from dominus.jobs.sql import sqlite_backend
from dominus.schema.migrate import upgrade

T0 = datetime(2030, 1, 1, tzinfo=UTC)
PENDING, CLAIMS, BATCH = 50_000, 300, 10
HAS_KEYS = "concurrency_key" in {field.name for field in fields(NewJob)}


def job(key: str | None = None, priority: int = 0, offset: float = 0) -> NewJob:
    new = NewJob("diag.noop", {}, priority, 3, T0 + timedelta(microseconds=offset))
    if key is None:
        return new
    return replace(new, concurrency_key=key, concurrency_limit=1)


def plain(store: SqlJobStore) -> None:
    """50,000 pending jobs, none with a key."""
    _enqueue(store, [job(offset=n) for n in range(PENDING)])


def one_hot_key(store: SqlJobStore) -> None:
    """The same, plus 5,000 jobs on one key (limit 1, one running) ahead of them in claim order."""
    plain(store)
    _enqueue(store, [job("bulk", priority=5, offset=n) for n in range(5_000)])
    store.claim("holder", ["diag.noop"], 1, T0)


def many_keys(store: SqlJobStore) -> None:
    """The same, plus 100 keys with 20 jobs each (limit 1), ahead of them in claim order."""
    plain(store)
    _enqueue(store, [job(f"key-{k}", priority=5, offset=n) for k in range(100) for n in range(20)])


SCENARIOS: dict[str, Callable[[SqlJobStore], None]] = {
    "plain": plain,
    "one_hot_key": one_hot_key,
    "many_keys": many_keys,
}


def _enqueue(store: SqlJobStore, jobs: list[NewJob]) -> None:
    for start in range(0, len(jobs), 5_000):
        store.enqueue(jobs[start : start + 5_000], T0)


def measure(store: SqlJobStore, engine: Engine) -> dict[str, tuple[float, float, float]]:
    """Per claim, for `store.claim` and for the loop's settle: the median wall time, and the CPU
    time of this process and of the database's server processes (PostgreSQL), in ms. CPU time
    hardly moves with the load of other processes on a shared machine; the wall time does."""
    now = T0 + timedelta(seconds=1)
    if engine.dialect.name == "postgresql":  # statistics as autovacuum would have them
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE job_queue"))

    def by_store(index: int) -> list[Any]:
        return store.claim(f"c{index}", ["diag.noop"], BATCH, now)

    def by_settle(index: int) -> list[Any]:
        request = ClaimRequest(f"s{index}", ["diag.noop"], BATCH)
        return store.settle([], now, claim_for=request)[1]

    by_store(-1), by_settle(-1)  # both connections open before the server's CPU is read
    return {"claim": _timed(by_store, engine), "settle": _timed(by_settle, engine)}


def _timed(claim: Callable[[int], list[Any]], engine: Engine) -> tuple[float, float, float]:
    server = _ServerCpu(engine)
    walls: list[float] = []
    cpu = time.process_time()
    for index in range(CLAIMS):
        started = time.perf_counter()
        assert claim(index)
        walls.append(time.perf_counter() - started)
    client = (time.process_time() - cpu) / CLAIMS
    return statistics.median(walls) * 1000, client * 1000, server.since() / CLAIMS * 1000


class _ServerCpu:
    """The CPU seconds used by the server processes of this database (PostgreSQL; 0 for SQLite,
    which runs in this process)."""

    def __init__(self, engine: Engine) -> None:
        self._pids: list[int] = []
        if engine.dialect.name == "postgresql":
            # On a connection of its own: one from the engine's pool may be the claims' own.
            url = engine.url.set(drivername="postgresql").render_as_string(False)
            with psycopg.connect(url) as connection:
                self._pids = [
                    row[0]
                    for row in connection.execute(
                        "SELECT pid FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                ]
        self._start = self._now()

    def _now(self) -> float:
        ticks = 0
        for pid in self._pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks += int(stat[11]) + int(stat[12])  # utime + stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def since(self) -> float:
        return self._now() - self._start


@contextmanager
def database(backend: str, pg_url: str) -> Iterator[Engine]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            engine = create_database_engine(f"sqlite:///{Path(directory) / 'claim.db'}")
            try:
                yield engine
            finally:
                engine.dispose()
        return
    name = f"dominus_claimkeys_{os.getpid()}"
    admin = make_url(pg_url).set(drivername="postgresql").render_as_string(False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    url = make_url(pg_url).set(drivername="postgresql+psycopg", database=name)
    engine = create_database_engine(url.render_as_string(False))
    try:
        yield engine
    finally:
        engine.dispose()
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def explain(engine: Engine) -> None:
    now = T0 + timedelta(seconds=1)
    if engine.dialect.name == "sqlite":
        _explain_sqlite(engine, now)
        return
    with engine.begin() as connection:
        raw: Any = connection.connection.driver_connection
        postgres_claims = _module("dominus.jobs.sql.postgres_claims")
        if postgres_claims is None:  # main: the statement lived in the backend's module
            statement = _module("dominus.jobs.sql.postgres_backend")._CLAIM
            parameters = {"now": now, "worker_id": "x", "job_types": ["diag.noop"], "limit": BATCH}
        else:
            request = ClaimRequest("x", ["diag.noop"], BATCH)
            lock = postgres_claims.lock_parameters([request], now)
            print("    -- LOCK_KEYS")
            _print_plan(raw, postgres_claims.LOCK_KEYS, lock)
            raw.execute(postgres_claims.LOCK_KEYS, lock)  # as the worker does, then the claim
            statement = postgres_claims.CLAIM
            parameters = postgres_claims.claim_parameters(request, now)
        print("    -- CLAIM")
        _print_plan(raw, statement, parameters)
        raw.rollback()


def _print_plan(raw: Any, statement: str, parameters: dict[str, Any]) -> None:
    for row in raw.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + statement, parameters):
        print("     ", row[0])


def _explain_sqlite(engine: Engine, now: datetime) -> None:
    stamp = sqlite_backend.stored_time(now)
    sqlite_claims = _module("dominus.jobs.sql.sqlite_claims")
    if sqlite_claims is None:  # main: the statement lived in the backend's module
        sql = sqlite_backend._claim_sql(1)  # type: ignore[attr-defined]
        parameters = sqlite_backend._claim_parameters(  # type: ignore[attr-defined]
            "x", stamp, ["diag.noop"], BATCH, None
        )
        statements = [(sql, parameters)]
    else:
        statements = [
            (sqlite_claims.HAS_KEYED_PENDING, ()),
            *(
                (
                    sqlite_claims.claim_sql(1, 0, keyed),
                    sqlite_claims.claim_parameters("x", stamp, ["diag.noop"], BATCH, None, keyed),
                )
                for keyed in (False, True)
            ),
        ]
    with engine.connect() as connection:
        raw: Any = connection.connection.driver_connection
        for sql, parameters in statements:
            print("    --", sql[:70])
            for row in raw.execute("EXPLAIN QUERY PLAN " + sql, parameters):
                print("      ", row[3])


def _module(name: str) -> Any:
    """The module `name`, or None where this checkout has none (main, before keys)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--explain", action="store_true", help="print the claim's plan too")
    options = parser.parse_args()
    scenarios = options.scenario or (list(SCENARIOS) if HAS_KEYS else ["plain"])
    backends = ("sqlite", "postgresql") if options.backend == "both" else (options.backend,)
    for backend in backends:
        for scenario in scenarios:
            with database(backend, options.pg_url) as engine:
                upgrade(engine)
                store = SqlJobStore(engine)
                SCENARIOS[scenario](store)
                for path, (wall, client, server) in measure(store, engine).items():
                    print(
                        f"{backend:10} {scenario:12} {path:6} wall {wall:6.2f} ms  "
                        f"cpu: client {client:5.2f} ms, server {server:5.2f} ms",
                        flush=True,
                    )
                if options.explain:
                    explain(engine)


if __name__ == "__main__":
    main()
