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
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from queue import Empty, Queue

import psycopg
import pytest
from hypothesis import settings
from sqlalchemy import Engine, make_url

from dominus.db.engine import create_database_engine
from dominus.jobs import HandlerRegistry, JobQueue, SqlJobStore
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.schema.migrate import upgrade

T0 = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)

# Hypothesis: few examples by default so the suite stays fast; `--hypothesis-profile=long` for
# deeper runs of the property tests (tests that set their own example count keep it).
settings.register_profile(
    "dominus", max_examples=8, stateful_step_count=30, deadline=None, database=None
)
settings.register_profile(
    "long", max_examples=400, stateful_step_count=100, deadline=None, database=None
)
settings.load_profile("dominus")
POSTGRES_URL = os.environ.get(
    "DOMINUS_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


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


class PostgresDatabases:
    """Creates throwaway databases on the test server (and drops them)."""

    def __init__(self, server_url: str) -> None:
        self._admin = make_url(server_url).set(drivername="postgresql").render_as_string(False)
        self._server = make_url(server_url)

    def url(self, name: str) -> str:
        return self._server.set(database=name).render_as_string(hide_password=False)

    def create(self, name: str, template: str | None = None) -> str:
        with psycopg.connect(self._admin, autocommit=True) as admin:
            clause = f' TEMPLATE "{template}"' if template else ""
            admin.execute(f'CREATE DATABASE "{name}"{clause}')
        return self.url(name)

    def drop(self, name: str) -> None:
        with psycopg.connect(self._admin, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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


class ReadyDatabases:
    """Test databases cloned from the migrated template ahead of need, and dropped after use,
    by one background thread: a PostgreSQL test waits for neither (each takes about 0.3–1 s on
    this machine, and about a thousand tests use one). One thread does every CREATE and DROP,
    in turn, so the template is never copied twice at once."""

    AHEAD = 2

    def __init__(self, databases: PostgresDatabases, template: str) -> None:
        self._databases = databases
        self._template = template
        self._ready: Queue[str | BaseException] = Queue()
        self._to_drop: Queue[str | None] = Queue()
        self._wanted = threading.Semaphore(self.AHEAD)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-databases", daemon=True)
        self._thread.start()

    def take(self) -> str:
        """The name of a fresh database (waits while one is being made)."""
        made = self._ready.get(timeout=120)
        self._wanted.release()
        if isinstance(made, BaseException):
            raise made
        return made

    def give_back(self, name: str) -> None:
        self._to_drop.put(name)

    def close(self) -> None:
        self._stopping.set()
        self._wanted.release()  # wake the thread if it waits for demand
        self._to_drop.put(None)
        self._thread.join(120)
        while not self._ready.empty():
            made = self._ready.get_nowait()
            if isinstance(made, str):
                self._databases.drop(made)

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._drop_given_back()
            if self._wanted.acquire(timeout=0.05):
                if self._stopping.is_set():
                    break
                name = f"dominus_test_{uuid.uuid4().hex[:12]}"
                try:
                    self._databases.create(name, template=self._template)
                except Exception as error:  # handed to the test that waits for it
                    self._ready.put(error)
                else:
                    self._ready.put(name)
        self._drop_given_back(until_none=True)

    def _drop_given_back(self, *, until_none: bool = False) -> None:
        while True:
            try:
                name = self._to_drop.get(timeout=1 if until_none else 0)
            except Empty:
                return
            if name is None:
                if until_none:
                    return
                continue
            with contextlib.suppress(psycopg.Error):
                self._databases.drop(name)


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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `postgres` every test that reaches the server through a fixture of its own (before
    `-m` deselects)."""
    for item in items:
        if POSTGRES_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)


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
