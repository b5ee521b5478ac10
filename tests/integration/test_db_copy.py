"""`dominus db copy`: every table from SQLite to PostgreSQL and back, row for row.

The source is filled through the public API (a `JobQueue`, a `Worker` stepped with `drain`, the
diagnostic job types and the store's own operations), so it holds what real use leaves behind:
jobs in every state, retries, events, dead-letter entries (requeued and not), progress, workers
alive and stopped. Copies are compared through the store (`get_job`, `job_events`,
`list_dead_letters`, `list_workers`) and column by column through the schema's tables.

PostgreSQL tests (marked `postgres`) create throwaway databases on the test server; without the
server they fail, never skip. The `dominus db copy` command itself runs in process, through its
real entry point.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from dominus.config import Settings
from dominus.db.engine import create_database_engine
from dominus.errors import (
    ConfigurationError,
    CopyRefusedError,
    DatabaseError,
    SchemaNotMigratedError,
)
from dominus.jobs import (
    EnqueueRequest,
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    RetryPolicy,
    SqlJobStore,
    Worker,
    WorkerConfig,
    WorkerInfo,
)
from dominus.jobs.diagnostic import NoPayload, register_diagnostic_jobs
from dominus.schema.copy import copy_database
from dominus.schema.migrate import current_revision, downgrade, head_revision
from dominus.schema.tables import job_metrics, metadata
from tests.support.cli import run_in_process
from tests.support.clock import FakeClock
from tests.support.databases import PostgresDatabases
from tests.support.draining import drain

OTHER_WORKER = "elsewhere:4242:beef01"
ALL_TABLES = [table.name for table in metadata.sorted_tables]


# --- helpers ---------------------------------------------------------------------------------


class Databases:
    """Opens stores on URLs and makes databases; closes and drops them at the end of the test."""

    def __init__(self, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        self.tmp_path = tmp_path
        self.request = request
        self.engines: list[Engine] = []
        self.dropped: list[str] = []

    def store(self, url: str) -> SqlJobStore:
        self.engines.append(create_database_engine(url))
        return SqlJobStore(self.engines[-1])

    def sqlite(self, name: str, *, migrated: bool = False) -> str:
        path = self.tmp_path / name
        if migrated:
            shutil.copyfile(self.request.getfixturevalue("migrated_sqlite_template"), path)
        return f"sqlite:///{path}"

    def postgres(self, *, migrated: bool = False) -> str:
        servers: PostgresDatabases = self.request.getfixturevalue("postgres_databases")
        template = self.request.getfixturevalue("migrated_postgres_template") if migrated else None
        name = f"dominus_copy_{uuid.uuid4().hex[:12]}"
        url = servers.create(name, template=template)
        self.dropped.append(name)
        return url

    def new(self, backend: str, name: str, *, migrated: bool = False) -> str:
        if backend == "sqlite":
            return self.sqlite(f"{name}.db", migrated=migrated)
        return self.postgres(migrated=migrated)

    def close(self) -> None:
        for engine in self.engines:
            engine.dispose()
        if self.dropped:
            servers: PostgresDatabases = self.request.getfixturevalue("postgres_databases")
            for name in self.dropped:
                servers.drop(name)


@pytest.fixture
def databases(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Databases]:
    made = Databases(tmp_path, request)
    yield made
    made.close()


def fast_worker(store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock) -> Worker:
    config = WorkerConfig(concurrency=4, retry_policy=RetryPolicy(base_seconds=0, max_seconds=0))
    return Worker(store, registry, config, clock=clock)


def fill(store: SqlJobStore, clock: FakeClock) -> None:
    """Jobs in every state, with events, dead-letter entries, progress and workers."""
    registry = register_diagnostic_jobs(HandlerRegistry())
    queue = JobQueue(store, registry, clock=clock)
    for priority in range(4):
        queue.enqueue_job("diag.noop", priority=priority)
    queue.enqueue_job("diag.fail", {"fail_times": 1, "message": "flaky"})  # succeeds on retry
    queue.enqueue_job("diag.fail", {"fail_times": 9, "message": "ünïcode ✓"}, max_attempts=2)
    requeued = queue.enqueue_job("diag.fail", {"fail_times": 9}, max_attempts=1).job_id
    worker = fast_worker(store, registry, clock)
    clock.advance(0.123457)
    drain(worker, clock=clock)
    clock.advance(1.000001)
    entry = next(e for e in store.list_dead_letters() if e.job_id == requeued)
    queue.requeue_dead_letter(entry.id)  # → pending again; the entry keeps requeued_at
    queue.enqueue_job(
        "diag.sleep",
        {"seconds": 2.5},
        run_at=clock.now.replace(year=2031),
        dedupe_key="nightly",
        timeout_seconds=30,
    )
    running = queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    [claimed] = store.claim(OTHER_WORKER, ["diag.sleep"], 1, clock.advance(0.5))
    assert claimed.id == running
    store.record_progress(claimed.claim, {"slept_seconds": 1.5, "total_seconds": 60}, clock())
    queue.cancel(running)  # running: a cancel request for its worker
    cancelled = queue.enqueue_job("diag.noop").job_id
    queue.cancel(cancelled)
    retried = queue.enqueue_job("diag.noop").job_id
    queue.cancel(retried)
    clock.advance(2.654321)
    queue.retry(retried)
    store.mark_worker_stopped(worker.id, clock.advance(0.25))
    now = clock.advance(3.5)
    store.register_worker(WorkerInfo(OTHER_WORKER, "elsewhere", 4242, 8, ["diag.sleep"], now, now))


def snapshot(store: SqlJobStore) -> dict[str, Any]:
    """Everything the store shows, keyed so that ids must match too."""
    jobs = store.list_jobs(limit=100_000)
    return {
        "jobs": {job.id: store.get_job(job.id) for job in jobs},
        "events": {job.id: store.job_events(job.id) for job in jobs},
        "dead_letters": store.list_dead_letters(include_requeued=True, limit=100_000),
        "workers": sorted(store.list_workers(), key=lambda worker: worker.id),
        "metrics": store.metric_totals(),
    }


def table_rows(store: SqlJobStore) -> dict[str, list[dict[str, Any]]]:
    """Every column of every row of every DOMINUS table, by primary key; but the metric
    counters, which must keep their totals (`snapshot`), not their rows: SQLite counts enqueues
    from the job rows, PostgreSQL in the counters (ADR 0036)."""
    with store.engine.connect() as connection:
        return {
            table.name: [
                dict(row._mapping)
                for row in connection.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in metadata.sorted_tables
            if table.name != "job_metrics"
        }


def metric_rows(store: SqlJobStore) -> int:
    with store.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(job_metrics)).scalar_one())


def assert_covers_everything(state: dict[str, Any]) -> None:
    """The filled source really holds what the copy must carry."""
    jobs = state["jobs"].values()
    assert {job.status for job in jobs} == set(JobStatus)
    kinds = {event.kind for events in state["events"].values() for event in events}
    assert kinds >= {
        EventKind.FAILED,
        EventKind.RETRY_SCHEDULED,
        EventKind.DEAD_LETTERED,
        EventKind.REQUEUED,
        EventKind.CANCEL_REQUESTED,
        EventKind.CANCELLED,
        EventKind.RETRIED,
    }
    assert {entry.requeued_at is None for entry in state["dead_letters"]} == {True, False}
    assert {worker.stopped_at is None for worker in state["workers"]} == {True, False}
    assert any(job.progress for job in jobs)
    assert any(job.dedupe_key and job.timeout_seconds for job in jobs)
    assert any(job.run_at.microsecond for job in jobs)


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str


def run_dominus(cwd: Path, *args: str) -> Ran:
    """`dominus ARGS` in process, with DATABASE_URL pointing where nothing may appear."""
    env = {key: value for key, value in os.environ.items() if key not in Settings.model_fields}
    env["DATABASE_URL"] = f"sqlite:///{cwd / 'unused' / 'dominus.db'}"
    code, stdout, stderr = run_in_process(args, env, cwd)
    assert not (cwd / "unused").exists(), "db copy must not touch DATABASE_URL"
    return Ran(code, stdout, stderr)


def assert_one_line_error(ran: Ran, *fragments: str) -> None:
    assert ran.code == 2, ran
    assert ran.stdout == "", ran
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), ran
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def failing_registry() -> HandlerRegistry:
    def doomed(_payload: NoPayload, _context: JobContext) -> dict[str, Any]:
        raise RuntimeError("doomed")

    registry = HandlerRegistry()
    registry.register("test.doomed", doomed, NoPayload, max_attempts=1)
    return registry


# --- round trip ------------------------------------------------------------------------------


@pytest.mark.postgres
def test_sqlite_to_postgresql_and_back_keeps_every_row(
    databases: Databases, database_url: str, clock: FakeClock
) -> None:
    source = databases.store(database_url)
    fill(source, clock)
    original, original_rows = snapshot(source), table_rows(source)
    assert_covers_everything(original)
    postgres_url = databases.postgres()  # empty: the copy creates the schema

    seen: list[tuple[str, int, int]] = []
    report = copy_database(
        database_url, postgres_url, batch_rows=3, progress=lambda *p: seen.append(p)
    )
    assert list(report.rows) == ALL_TABLES
    assert report.rows == {
        **{name: len(rows) for name, rows in original_rows.items()},
        **{"job_metrics": metric_rows(source)},
    }
    total = len(original_rows["job_queue"])
    assert [p for p in seen if p[0] == "job_queue"] == [
        ("job_queue", min(n, total), total) for n in range(3, total + 3, 3)
    ]
    postgres = databases.store(postgres_url)
    assert current_revision(postgres.engine) == head_revision()
    assert snapshot(postgres) == original
    assert table_rows(postgres) == original_rows

    back_url = databases.sqlite("back.db")  # does not exist yet
    copy_database(postgres_url, back_url)
    back = databases.store(back_url)
    assert snapshot(back) == original
    assert table_rows(back) == original_rows

    # New rows on PostgreSQL take the next ids: every sequence was moved past the copied ones.
    registry = failing_registry()
    job_id = JobQueue(postgres, registry, clock=clock).enqueue_job("test.doomed").job_id
    assert job_id == max(original["jobs"]) + 1
    drain(fast_worker(postgres, registry, clock), clock=clock)
    assert postgres.get_job(job_id).status is JobStatus.FAILED
    [entry] = [e for e in postgres.list_dead_letters() if e.job_id == job_id]
    assert entry.id == max(e.id for e in original["dead_letters"]) + 1
    event_ids = [e.id for events in original["events"].values() for e in events]
    assert min(e.id for e in postgres.job_events(job_id)) == max(event_ids) + 1
    assert JobQueue(back, registry).enqueue_job("test.doomed").job_id == job_id


@pytest.mark.postgres
def test_large_tables_stream_in_batches_both_ways(
    databases: Databases, database_url: str, clock: FakeClock
) -> None:
    source = databases.store(database_url)
    queue = JobQueue(source, register_diagnostic_jobs(HandlerRegistry()), clock=clock)
    queue.enqueue_jobs([EnqueueRequest("diag.noop", priority=n % 7) for n in range(12_345)])
    postgres_url, back_url = databases.postgres(), databases.sqlite("back.db")
    for from_url, to_url in ((database_url, postgres_url), (postgres_url, back_url)):
        seen: list[tuple[str, int, int]] = []
        report = copy_database(from_url, to_url, progress=lambda *p, seen=seen: seen.append(p))
        assert report.rows["job_queue"] == 12_345
        assert [p for p in seen if p[0] == "job_queue"] == [
            ("job_queue", 5_000, 12_345),
            ("job_queue", 10_000, 12_345),
            ("job_queue", 12_345, 12_345),
        ]
        assert ("job_events", 0, 0) in seen
    assert table_rows(databases.store(back_url)) == table_rows(source)


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target_backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_non_empty_target_is_refused_unless_forced(
    databases: Databases, database_url: str, clock: FakeClock, tmp_path: Path, target_backend: str
) -> None:
    source = databases.store(database_url)
    fill(source, clock)
    original, original_rows = snapshot(source), table_rows(source)
    target_url = databases.new(target_backend, "target", migrated=True)
    target = databases.store(target_url)
    queue = JobQueue(target, register_diagnostic_jobs(HandlerRegistry()), clock=clock)
    for job_id in [queue.enqueue_job("diag.noop").job_id for _ in range(30)][::3]:
        queue.cancel(job_id)  # events too, so deleting must go children first
    before = table_rows(target)

    refused = run_dominus(tmp_path, "db", "copy", "--from", database_url, "--to", target_url)
    assert_one_line_error(refused, "not empty", "job_queue: 30", "job_events: 10", "--force")
    assert table_rows(target) == before

    forced = run_dominus(
        tmp_path, "db", "copy", "--from", database_url, "--to", target_url, "--force"
    )
    assert forced.code == 0, forced
    total = sum(len(rows) for rows in original_rows.values()) + metric_rows(source)
    assert f"copied {total:,} rows from" in forced.stdout
    assert "job_queue" in forced.stdout and "dead_letter_jobs" in forced.stdout
    assert f"job_queue: {len(original_rows['job_queue'])} / " in forced.stderr
    assert snapshot(target) == original
    assert table_rows(target) == original_rows  # no leftovers
    # Ids continue after the copied ones, not after the 30 deleted jobs.
    assert queue.enqueue_job("diag.noop").job_id == max(original["jobs"]) + 1


def test_unmigrated_source_is_refused(databases: Databases, tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    older_url = databases.sqlite("older.db", migrated=True)
    downgrade(databases.store(older_url).engine, "0001_job_engine")
    target = tmp_path / "target.db"
    cases = [
        (f"sqlite:///{tmp_path / 'missing.db'}", ["missing.db does not exist"]),
        (f"sqlite:///{empty}", ["source database", "revision none", "migrate it first"]),
        (older_url, ["revision 0001_job_engine", head_revision(), "migrate it first"]),
    ]
    for source_url, fragments in cases:
        ran = run_dominus(
            tmp_path, "db", "copy", "--from", source_url, "--to", f"sqlite:///{target}"
        )
        assert_one_line_error(ran, *fragments)
        assert not target.exists()
    assert not (tmp_path / "missing.db").exists()


def test_the_same_database_is_refused(
    databases: Databases, database_url: str, tmp_path: Path
) -> None:
    path = Path(database_url.removeprefix("sqlite:///"))
    link = tmp_path / "link.db"
    link.symlink_to(path)
    relative = os.path.relpath(path)
    for other in (database_url, f"sqlite:///{relative}", f"sqlite:///{link}"):
        with pytest.raises(CopyRefusedError, match="same database"):
            copy_database(database_url, other, force=True)
    server = "postgresql+psycopg://postgres@127.0.0.1:5432/dominus_copy_nowhere"
    with pytest.raises(CopyRefusedError, match="same database"):
        copy_database(server, "postgresql://postgres@127.0.0.1/dominus_copy_nowhere", force=True)
    ran = run_dominus(tmp_path, "db", "copy", "--from", database_url, "--to", database_url)
    assert_one_line_error(ran, "the source and the target are the same database")


@pytest.mark.parametrize(
    ("source", "target", "fragment"),
    [
        ("mysql://localhost/dominus", "sqlite:///x.db", "source must be a sqlite:///"),
        ("sqlite:///x.db", "not a url", "target is not a valid database URL"),
        ("postgresql+psycopg://u@h:abc/db", "sqlite:///x.db", "source is not a valid database"),
        ("sqlite:///x.db", "postgresql+psycopg://u@h:abc/db", "target is not a valid database"),
        ("sqlite:///x.db", "sqlite://", "target must be a SQLite file, not an in-memory"),
        ("sqlite:///x.db", "sqlite:///:memory:", "target must be a SQLite file, not an in-memory"),
    ],
)
def test_bad_urls_are_refused(source: str, target: str, fragment: str) -> None:
    with pytest.raises(ConfigurationError, match=fragment):
        copy_database(source, target)


def test_a_non_numeric_port_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    bad = "postgresql+psycopg://u@h:abc/db"
    for args in (("--from", source, "--to", bad), ("--from", bad, "--to", source)):
        ran = run_dominus(tmp_path, "db", "copy", *args)
        assert_one_line_error(ran, "is not a valid database URL", "h:abc")


def test_target_at_an_unknown_revision_is_refused(
    databases: Databases, database_url: str, tmp_path: Path
) -> None:
    target = tmp_path / "newer.db"
    shutil.copyfile(Path(database_url.removeprefix("sqlite:///")), target)
    with sqlite3.connect(target) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999_future'")
    with pytest.raises(SchemaNotMigratedError, match="9999_future"):
        copy_database(database_url, f"sqlite:///{target}")


# --- all or nothing --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target_backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_a_failed_copy_leaves_the_target_as_it_was(
    databases: Databases, database_url: str, clock: FakeClock, target_backend: str
) -> None:
    source = databases.store(database_url)
    fill(source, clock)
    source.engine.dispose()
    # An event whose job does not exist: the last table copied breaks a foreign key.
    with sqlite3.connect(database_url.removeprefix("sqlite:///")) as connection:
        connection.execute(
            "INSERT INTO job_events (job_id, kind, at) VALUES (999999, 'failed', "
            "'2030-01-01 12:00:00.000000')"
        )
    target_url = databases.new(target_backend, "target", migrated=True)
    target = databases.store(target_url)
    JobQueue(target, register_diagnostic_jobs(HandlerRegistry()), clock=clock).enqueue_job(
        "diag.noop"
    )
    before = table_rows(target)
    with pytest.raises(DatabaseError, match=r"(?i)foreign key"):
        copy_database(database_url, target_url, force=True)
    assert table_rows(target) == before
