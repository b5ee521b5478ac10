"""The engine's PostgreSQL sessions are in UTC, whatever the server or the database says: the
times it reads come back as `datetime.timezone.utc`, the same instants as before."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC
from typing import Any

import psycopg
import pytest
from sqlalchemy import make_url, text

from dominus.db.engine import create_database_engine
from dominus.jobs import HandlerRegistry, JobQueue
from dominus.jobs.clock import utc_now
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.sql.store import SqlJobStore

pytestmark = pytest.mark.backends("postgresql")

ELSEWHERE = "America/New_York"


def _conninfo(database_url: str) -> str:
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


@pytest.fixture
def database_elsewhere(database_url: str) -> Iterator[str]:
    """The test's database with sessions in New York by default (reset afterwards: the
    databases are reused)."""
    name = make_url(database_url).database
    with psycopg.connect(_conninfo(database_url), autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE \"{name}\" SET TimeZone = '{ELSEWHERE}'")
    try:
        yield database_url
    finally:
        with psycopg.connect(_conninfo(database_url), autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" RESET TimeZone')


def test_a_plain_session_follows_the_database(database_elsewhere: str) -> None:
    with psycopg.connect(_conninfo(database_elsewhere)) as connection:
        row: Any = connection.execute("SHOW TimeZone").fetchone()
    assert row[0] == ELSEWHERE  # what the engine's sessions are changed from


def test_the_engines_sessions_are_in_utc(database_elsewhere: str) -> None:
    engine = create_database_engine(database_elsewhere)
    try:
        with engine.connect() as connection:
            assert connection.execute(text("SHOW TimeZone")).scalar() == "UTC"
            now = connection.execute(text("SELECT now()")).scalar()
        assert now is not None and now.tzinfo is UTC
    finally:
        engine.dispose()


def test_a_claimed_jobs_times_are_utc(database_elsewhere: str) -> None:
    engine = create_database_engine(database_elsewhere)
    try:
        store = SqlJobStore(engine)
        queue = JobQueue(store, register_diagnostic_jobs(HandlerRegistry()))
        enqueued = queue.enqueue_job("diag.noop", {})
        _, claimed = store.settle([], utc_now(), claim_for=("w1", ["diag.noop"], 1))
        [job] = claimed
        assert job.id == enqueued.job_id
        for moment in (job.run_at, job.created_at, job.updated_at, job.started_at):
            assert moment is not None and moment.tzinfo is UTC
        assert store.get_job(job.id).created_at == job.created_at  # the same instant
    finally:
        engine.dispose()
