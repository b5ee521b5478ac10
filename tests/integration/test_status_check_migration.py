"""Migration 0020 spells SQLite's job status CHECK as comparisons, in place: the same statuses
allowed and refused, the rows, events and indexes of the table untouched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from dominus.db.engine import create_database_engine
from dominus.jobs import JobStatus
from dominus.jobs.model import Completed
from dominus.jobs.sql.store import SqlJobStore
from dominus.schema.migrate import current_revision, downgrade, head_revision, upgrade
from tests.support.clock import T0
from tests.support.jobs import new_job

BEFORE = "0019_one_claim_index"
AS_LIST = "status IN ('pending', 'running', 'completed', 'failed', 'cancelled')"
AS_COMPARISONS = (
    "status = 'pending' OR status = 'running' OR status = 'completed' OR status = 'failed' "
    "OR status = 'cancelled'"
)
STATUSES = ["pending", "running", "completed", "failed", "cancelled"]


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'check.db'}")
    yield engine
    engine.dispose()


def table_definition(engine: Engine) -> str:
    with engine.connect() as connection:
        return str(
            connection.execute(
                text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'job_queue'")
            ).scalar_one()
        )


def index_definitions(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'job_queue'")
        )
        return sorted(str(sql) for (sql,) in rows if sql is not None)


def table_contents(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as connection:
        jobs = connection.execute(text("SELECT * FROM job_queue ORDER BY id")).all()
        events = connection.execute(text("SELECT * FROM job_events ORDER BY id")).all()
    return [tuple(row) for row in [*jobs, *events]]


def set_status(engine: Engine, job_id: int, status: str) -> None:
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE job_queue SET status = :status WHERE id = :id"),
            {"status": status, "id": job_id},
        )


def test_a_new_database_checks_the_status_with_comparisons(engine: Engine) -> None:
    upgrade(engine)
    assert AS_COMPARISONS in table_definition(engine)
    assert "status IN" not in table_definition(engine)
    [result] = SqlJobStore(engine).enqueue([new_job()], T0)
    for status in STATUSES:
        set_status(engine, result.job_id, status)
    for bad in ["bogus", "Pending", "", "pending "]:
        with pytest.raises(IntegrityError, match="CHECK constraint failed"):
            set_status(engine, result.job_id, bad)


def test_upgrading_keeps_every_row_event_and_index(engine: Engine) -> None:
    upgrade(engine, BEFORE)
    assert AS_LIST in table_definition(engine)
    store = SqlJobStore(engine)
    store.enqueue([new_job() for _ in range(3)], T0)
    [job] = store.claim("w1", ["diag.noop"], 1, T0)
    store.settle([Completed(job.claim)], T0)
    indexes, contents = index_definitions(engine), table_contents(engine)
    # A connection opened before the upgrade goes on working, and refuses a bad status.
    with engine.connect() as open_before:
        upgrade(engine)
        with pytest.raises(IntegrityError, match="CHECK constraint failed"):
            open_before.execute(text("UPDATE job_queue SET status = 'bogus' WHERE id = 2"))
        open_before.rollback()
    assert current_revision(engine) == head_revision()
    assert AS_COMPARISONS in table_definition(engine)
    assert index_definitions(engine) == indexes
    assert table_contents(engine) == contents
    assert store.get_job(job.id).status is JobStatus.COMPLETED
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA integrity_check")).scalar_one() == "ok"


def test_downgrading_brings_the_list_back(engine: Engine) -> None:
    upgrade(engine)
    downgrade(engine, BEFORE)
    assert AS_LIST in table_definition(engine)
    assert AS_COMPARISONS not in table_definition(engine)
    upgrade(engine)
    assert AS_COMPARISONS in table_definition(engine)


def test_a_definition_spelled_otherwise_is_left_as_it_is(engine: Engine) -> None:
    """A rule the migration does not find word for word is slower, never wrong: kept."""
    upgrade(engine, BEFORE)
    with engine.begin() as connection:
        version = connection.execute(text("PRAGMA schema_version")).scalar_one()
        connection.execute(text("PRAGMA writable_schema = ON"))
        connection.execute(
            text(
                "UPDATE sqlite_master SET sql = replace(sql, :old, :new) "
                "WHERE type = 'table' AND name = 'job_queue'"
            ),
            {"old": AS_LIST, "new": AS_LIST.replace("IN (", "IN  (")},
        )
        connection.execute(text(f"PRAGMA schema_version = {int(version) + 1}"))
        connection.execute(text("PRAGMA writable_schema = OFF"))
    definition = table_definition(engine)
    upgrade(engine)
    assert table_definition(engine) == definition
    assert current_revision(engine) == head_revision()
