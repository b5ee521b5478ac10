"""Shared fixtures. Every test gets its own SQLite database file, copied from one migrated
template (migrating once per session keeps the suite fast)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from dominus.db.engine import create_database_engine
from dominus.db.migrate import upgrade
from dominus.jobs import HandlerRegistry, JobQueue, SqlJobStore
from dominus.jobs.diagnostic import register_diagnostic_jobs

T0 = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)


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
def database_path(migrated_sqlite_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "dominus.db"
    shutil.copyfile(migrated_sqlite_template, path)
    return path


@pytest.fixture
def database_url(database_path: Path) -> str:
    return f"sqlite:///{database_path}"


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
