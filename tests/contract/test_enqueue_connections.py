"""The common enqueue runs on driver connections of the backend's own, detached from
SQLAlchemy's pool (`dominus.jobs.sql.driver_connections`): it never waits for a pooled
connection once it has one, leaves the pool's connections as it found them, keeps at most a few
idle, closes them when the engine is disposed, and throws away a connection an error touched.
The statement is all or nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, create_engine

from dominus.errors import DatabaseError
from dominus.jobs import SqlJobStore
from dominus.jobs.metrics_model import ENQUEUED
from dominus.jobs.model import NewJob
from dominus.jobs.sql.driver_connections import DriverConnections
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def one_connection_engine(database_url: str) -> Iterator[Engine]:
    """An engine whose pool holds one connection and gives up waiting for it after 0.5 s."""
    engine = create_engine(database_url, pool_size=1, max_overflow=0, pool_timeout=0.5)
    yield engine
    engine.dispose()


def _is_closed(connection: Any) -> bool:
    if isinstance(connection, psycopg.Connection):
        return connection.closed
    try:
        connection.execute("SELECT 1")
    except sqlite3.ProgrammingError:  # sqlite3 says "closed" only by refusing
        return True
    return False


def test_enqueue_does_not_wait_for_the_pool(one_connection_engine: Engine) -> None:
    store = SqlJobStore(one_connection_engine)
    store.enqueue([new_job()], datetime.now(UTC))  # makes the enqueue's own connection
    with one_connection_engine.connect() as held:  # the pool's only connection, held
        store.enqueue([new_job(), new_job()], datetime.now(UTC))
        held.rollback()
    assert len(store.list_jobs()) == 3


def _refused_job(engine: Engine) -> NewJob:
    """A job the database refuses to store."""
    if engine.dialect.name == "postgresql":
        return NewJob("x" * 300, {}, 0, 3, datetime.now(UTC))  # job_type is varchar(200)
    return NewJob("diag.noop", {}, 0, 0, datetime.now(UTC))  # CHECK max_attempts >= 1


def test_a_refused_batch_writes_nothing_and_the_next_enqueue_works(engine: Engine) -> None:
    store = SqlJobStore(engine)
    with pytest.raises(DatabaseError):
        store.enqueue([new_job(), _refused_job(engine)], datetime.now(UTC))
    assert store.list_jobs() == []
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 0
    store.enqueue([new_job()], datetime.now(UTC))
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 1


def test_at_most_keep_idle_and_all_closed_when_the_engine_is_disposed(engine: Engine) -> None:
    connections = DriverConnections(engine, keep=2)
    taken = [connections.take() for _ in range(3)]
    assert len({id(connection) for connection in taken}) == 3
    for connection in taken:
        connections.give_back(connection)
    assert [_is_closed(connection) for connection in taken] == [False, False, True]
    again = connections.take()
    assert again is taken[1]  # newest first
    connections.give_back(again)
    engine.dispose()
    assert all(_is_closed(connection) for connection in taken)


def test_a_connection_an_error_touched_is_not_reused(engine: Engine) -> None:
    connections = DriverConnections(engine)
    first = connections.take()
    connections.discard(first)
    assert _is_closed(first)
    second = connections.take()
    assert second is not first
    connections.give_back(second)


def test_a_refused_single_job_writes_nothing_and_the_next_enqueue_works(engine: Engine) -> None:
    store = SqlJobStore(engine)
    with pytest.raises(DatabaseError):
        store.enqueue([_refused_job(engine)], datetime.now(UTC))
    assert store.list_jobs() == []
    store.enqueue([new_job()], datetime.now(UTC))
    assert len(store.list_jobs()) == 1


def test_run_gives_the_connection_back_or_throws_it_away_when_work_raises(engine: Engine) -> None:
    connections = DriverConnections(engine)
    used: list[Any] = []

    def fails_in_the_driver(connection: Any) -> None:
        used.append(connection)
        connection.execute("SELECT * FROM no_such_table")

    def fails_elsewhere(connection: Any) -> None:
        used.append(connection)
        raise KeyError("missing")

    def works(connection: Any) -> int:
        used.append(connection)
        return 7

    with pytest.raises(DatabaseError):  # the driver's error, in DOMINUS's words
        connections.run(fails_in_the_driver)
    assert _is_closed(used[0])
    with pytest.raises(KeyError):  # anything else leaves as it is
        connections.run(fails_elsewhere)
    assert _is_closed(used[1])
    assert connections.run(works) == 7
    assert not _is_closed(used[2])
    assert connections.take() is used[2]
