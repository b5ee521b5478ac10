"""Shared fixtures. Every test gets its own database: on SQLite a file copied from one migrated
template; on PostgreSQL a database cloned from a migrated template database (`CREATE DATABASE
... TEMPLATE`). Migrating once per session keeps the suite fast.

Backends: a test that uses the database runs on SQLite alone unless the closest
`@pytest.mark.backends(...)` (its own, its class's, or its module's `pytestmark`) names others:
`pytestmark = pytest.mark.backends("sqlite", "postgresql")` runs each of a module's database
tests once per backend, and a test narrows that with its own marker. Every PostgreSQL case
carries the `postgres` marker, added here. PostgreSQL tests need the server at
DOMINUS_TEST_POSTGRES_URL (default postgresql+psycopg://postgres@127.0.0.1:5432/postgres);
without it they fail, never skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from sqlalchemy import Engine, make_url

from dominus.db.engine import create_database_engine
from dominus.jobs import HandlerRegistry, JobQueue, SqlJobStore
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.schema.migrate import upgrade
from tests.support.clock import FakeClock
from tests.support.databases import POSTGRES_URL, PostgresDatabases, ReadyDatabases
from tests.support.polling import free_port
from tests.support.processes import dominus_executable
from tests.support.serving import ServeProcess
from tests.support.shared_routes import share_route_analysis

# Hypothesis: few examples by default so the suite stays fast; `--hypothesis-profile=long` for
# deeper runs of the property tests (tests that set their own example count keep it).
settings.register_profile(
    "dominus", max_examples=8, stateful_step_count=30, deadline=None, database=None
)
settings.register_profile(
    "long", max_examples=400, stateful_step_count=100, deadline=None, database=None
)
settings.load_profile("dominus")

# Every app the tests build shares one analysis of each route (tests/support/shared_routes.py).
share_route_analysis()


@pytest.fixture(scope="session")
def migrated_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    engine = create_database_engine(f"sqlite:///{path}")
    upgrade(engine)
    engine.dispose()
    return path


@pytest.fixture
def database_path(database_url: str, backend: str) -> Path:
    """The SQLite file of a SQLite test."""
    assert backend == "sqlite", "database_path is for SQLite tests"
    return Path(make_url(database_url).database or "")


@pytest.fixture(scope="session")
def postgres_databases() -> PostgresDatabases:
    return PostgresDatabases(POSTGRES_URL)


@pytest.fixture(scope="session")
def migrated_postgres_template(postgres_databases: PostgresDatabases) -> Iterator[str]:
    name = f"dominus_template_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    engine = create_database_engine(postgres_databases.create(name))
    upgrade(engine)
    engine.dispose()
    yield name
    postgres_databases.drop(name)


@pytest.fixture(scope="session")
def ready_postgres_databases(
    postgres_databases: PostgresDatabases, migrated_postgres_template: str
) -> Iterator[ReadyDatabases]:
    ready = ReadyDatabases(postgres_databases, migrated_postgres_template)
    yield ready
    ready.close()


BACKENDS = ("sqlite", "postgresql")

# Fixtures that reach the PostgreSQL server whatever the test's backend.
POSTGRES_FIXTURES = frozenset(
    {"postgres_databases", "migrated_postgres_template", "ready_postgres_databases"}
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run a test that uses the database once per backend its `backends` marker names."""
    if "backend" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("backends")
    if marker is None:
        return  # the `backend` fixture: SQLite
    names = marker.args
    unknown = set(names) - set(BACKENDS)
    assert names and not unknown, f"{metafunc.definition.nodeid}: backends{names!r}"
    metafunc.parametrize(
        "backend",
        [
            pytest.param(name, marks=[pytest.mark.postgres] if name == "postgresql" else [])
            for name in names
        ],
    )


# The tests that take longest (real worker and server processes, a browser, a model checker,
# long property-based runs; see `--durations`), run first. pytest-xdist hands each process a
# contiguous share of the collection and a process that runs out steals from the end of
# another's: with these first, the end of a parallel run is short tests that spread over both
# processes, never one long test that one process finishes while the other waits.
LONG_RUNNING_MARKS = frozenset({"slow", "browser", "model"})
LONG_RUNNING_MODULES = frozenset(
    {"tests/integration/test_store_state_machine.py", "tests/api/test_stateful_fuzz.py"}
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `postgres` every test that reaches the server through a fixture of its own (before
    `-m` deselects); put the long-running tests first (in their own order: each module's tests
    and the browser package's stay together)."""
    for item in items:
        if POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
    items.sort(key=lambda item: not _long_running(item))


def _long_running(item: pytest.Item) -> bool:
    marks = {mark.name for mark in item.iter_markers()}
    return bool(LONG_RUNNING_MARKS & marks) or item.nodeid.split("::")[0] in LONG_RUNNING_MODULES


@pytest.fixture
def backend() -> str:
    """The database backend of a test: SQLite, unless its `backends` marker parametrises it."""
    return "sqlite"


@pytest.fixture
def database_url(
    request: pytest.FixtureRequest, backend: str, migrated_sqlite_template: Path, tmp_path: Path
) -> Iterator[str]:
    if backend == "sqlite":
        path = tmp_path / "dominus.db"
        shutil.copyfile(migrated_sqlite_template, path)
        yield f"sqlite:///{path}"
        return
    databases: PostgresDatabases = request.getfixturevalue("postgres_databases")
    ready: ReadyDatabases = request.getfixturevalue("ready_postgres_databases")
    name = ready.take()
    yield databases.url(name)
    ready.give_back(name)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = create_database_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def store(engine: Engine) -> SqlJobStore:
    return SqlJobStore(engine)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry() -> HandlerRegistry:
    return register_diagnostic_jobs(HandlerRegistry())


@pytest.fixture
def queue(store: SqlJobStore, registry: HandlerRegistry, clock: FakeClock) -> JobQueue:
    return JobQueue(store, registry, clock=clock)


@pytest.fixture
def serve_processes(tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    """Start `dominus serve ARGS...` subprocesses; any still running at the end is killed."""
    started: list[ServeProcess] = []

    def start(
        *args: str, env: dict[str, str], port: int | None = None, token: str | None = None
    ) -> ServeProcess:
        port = port or free_port()
        index = len(started) + 1
        stdout_path = tmp_path / f"serve-{index}.stdout.log"
        stderr_path = tmp_path / f"serve-{index}.stderr.log"
        command = [dominus_executable(), "serve", "--port", str(port), *args]
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=tmp_path,  # not the repository: a stray `.env` there must not apply
            )
        process = ServeProcess(popen, port, stdout_path, stderr_path, token)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.popen.poll() is None:
            process.popen.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(10)
