"""`dominus.jobs` stands on its own: it imports nothing of the domain, and runs on a database
that holds the engine's tables only (ADR 0031)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import inspect

from dominus.db.engine import create_database_engine
from dominus.jobs import HandlerRegistry, JobQueue, JobStatus, SqlJobStore, Worker, WorkerConfig
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.sql.tables import ENGINE_TABLES, metadata
from tests.support.clock import FakeClock
from tests.support.draining import drain

# What the engine may import outside itself: database plumbing and the shared errors.
ALLOWED_OUTSIDE = {
    "dominus",
    "dominus.db",
    "dominus.db.drivers",
    "dominus.db.engine",
    "dominus.db.errors",
    "dominus.db.sqlite_file",
    "dominus.db.types",
    "dominus.errors",
    "dominus.lazy_exports",  # a leaf: how a package loads its names on first use
}


def test_importing_the_engine_loads_nothing_of_the_domain() -> None:
    program = (
        "import sys\n"
        "import dominus.jobs, dominus.jobs.sql, dominus.jobs.worker, dominus.jobs.scheduling\n"
        "import dominus.jobs.diagnostic\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('dominus')))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout.split()
    outside = {name for name in loaded if not name.startswith("dominus.jobs")}
    assert outside <= ALLOWED_OUTSIDE, sorted(outside - ALLOWED_OUTSIDE)


def test_the_engine_runs_on_a_database_with_only_its_own_tables(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'engine-only.db'}")
    metadata.create_all(engine, tables=list(ENGINE_TABLES))
    assert set(inspect(engine).get_table_names()) == {table.name for table in ENGINE_TABLES}
    clock = FakeClock()
    store = SqlJobStore(engine)
    registry = register_diagnostic_jobs(HandlerRegistry())
    queue = JobQueue(store, registry, clock=clock)
    ids = [queue.enqueue_job("diag.noop").job_id for _ in range(5)]
    worker = Worker(store, registry, WorkerConfig(concurrency=2), clock=clock)
    assert drain(worker, clock=clock) == 5
    assert {store.get_job(job_id).status for job_id in ids} == {JobStatus.COMPLETED}
    engine.dispose()
