"""Migrations: one Alembic history that builds the schema the code describes, on both backends."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect

from dominus.db.engine import create_database_engine
from dominus.errors import SchemaNotMigratedError
from dominus.jobs import SqlJobStore
from dominus.jobs.metrics_model import ENQUEUED
from dominus.jobs.model import NewJob
from dominus.schema import migrate
from dominus.schema.migrate import (
    current_revision,
    downgrade,
    ensure_migrated,
    head_revision,
    upgrade,
)
from dominus.schema.tables import metadata

T = datetime(2030, 1, 1, tzinfo=UTC)
POSTGRES_URL = os.environ.get(
    "DOMINUS_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def schema_differences(engine: Engine) -> list[Any]:
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        return list(compare_metadata(context, metadata))


def test_an_empty_database_is_refused_until_upgraded(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'new.db'}")
    with pytest.raises(SchemaNotMigratedError, match="dominus db upgrade"):
        ensure_migrated(engine)
    upgrade(engine)
    ensure_migrated(engine)
    assert current_revision(engine) == head_revision()
    upgrade(engine)  # idempotent
    engine.dispose()


def test_the_head_read_from_the_migration_files_is_alembics() -> None:
    assert migrate._plain_head() is not None  # the quick reading applies to this history
    assert head_revision() == migrate.alembic_head_revision()


def test_a_history_the_quick_reading_cannot_settle_is_left_to_alembic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    versions = tmp_path / "versions"
    versions.mkdir()
    (versions / "a.py").write_text('revision = "a"\ndown_revision = None\n', encoding="utf-8")
    (versions / "b.py").write_text('revision = "b"\ndown_revision = "a"\n', encoding="utf-8")
    monkeypatch.setattr(migrate, "MIGRATIONS_DIRECTORY", tmp_path)
    assert migrate._plain_head() == "b"
    (versions / "c.py").write_text('revision = "c"\ndown_revision = "a"\n', encoding="utf-8")
    assert migrate._plain_head() is None  # two heads
    (versions / "c.py").write_text('revision = "c"\ndown_revision = ("a", "b")\n', encoding="utf-8")
    assert migrate._plain_head() is None  # a merge


def test_sqlite_migrations_build_exactly_the_described_schema(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'schema.db'}")
    upgrade(engine)
    assert schema_differences(engine) == []
    names = set(inspect(engine).get_table_names())
    assert {"job_queue", "job_events", "dead_letter_jobs", "workers"} <= names
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
    engine.dispose()


def test_sqlite_migrations_downgrade_and_upgrade_again(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'down.db'}")
    upgrade(engine)
    downgrade(engine, "base")
    assert current_revision(engine) is None
    assert "job_queue" not in inspect(engine).get_table_names()
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    engine.dispose()


@pytest.fixture
def postgres_engine() -> Iterator[Engine]:
    """A brand-new PostgreSQL database, dropped afterwards. Fails (never skips) without a server."""
    admin_url = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
    name = f"dominus_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    engine = create_database_engine(POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}")
    yield engine
    engine.dispose()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.mark.postgres
def test_postgres_migrations_build_exactly_the_described_schema(postgres_engine: Engine) -> None:
    with pytest.raises(SchemaNotMigratedError):
        ensure_migrated(postgres_engine)
    upgrade(postgres_engine)
    ensure_migrated(postgres_engine)
    assert schema_differences(postgres_engine) == []
    downgrade(postgres_engine, "base")
    assert "job_queue" not in inspect(postgres_engine).get_table_names()


def test_upgrading_a_database_from_a_newer_dominus_is_a_clear_error(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'newer.db'}")
    upgrade(engine)
    with engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '9999_future'")
    with pytest.raises(SchemaNotMigratedError, match="newer than this DOMINUS"):
        upgrade(engine)
    engine.dispose()


def _enqueue_the_old_way(engine: Engine, job_types: list[str]) -> None:
    """What an enqueue did before 0010: the row and its counter, in one transaction."""
    with engine.begin() as connection:
        for job_type in job_types:
            connection.exec_driver_sql(
                "INSERT INTO job_queue (job_type, payload, status, priority, attempts, "
                "max_attempts, failure_count, run_at, created_at, updated_at) VALUES "
                "(?, '{}', 'pending', 0, 0, 3, 0, '2030-01-01 00:00:00.000000', "
                "'2030-01-01 00:00:00.000000', '2030-01-01 00:00:00.000000')",
                (job_type,),
            )
            connection.exec_driver_sql(
                "INSERT INTO job_metrics (name, job_type, bucket, shard, value) "
                "VALUES ('enqueued', ?, '', 1, 1) ON CONFLICT (name, job_type, bucket, shard) "
                "DO UPDATE SET value = value + excluded.value",
                (job_type,),
            )


def _stored_enqueued(engine: Engine) -> dict[str, float]:
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT job_type, sum(value) FROM job_metrics WHERE name = 'enqueued' GROUP BY job_type"
        ).all()
    return {job_type: float(total) for job_type, total in rows}


def test_sqlite_counters_survive_0010_both_ways(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'counts.db'}")
    upgrade(engine, "0009_backtest")
    _enqueue_the_old_way(engine, ["a", "a", "b"])
    upgrade(engine)  # the rows were counted already: the mark starts at the newest
    store = SqlJobStore(engine)
    assert store.metric_totals().counter(ENQUEUED, "a") == 2
    store.enqueue([NewJob("a", {}, 0, 3, T), NewJob("b", {}, 0, 3, T)], T)  # counted from rows
    assert store.metric_totals().counter(ENQUEUED, "a") == 3
    downgrade(engine, "0009_backtest")  # the old code must find every row counted
    assert _stored_enqueued(engine) == {"a": 3.0, "b": 2.0}
    engine.dispose()
