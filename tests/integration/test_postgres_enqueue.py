"""PostgreSQL: the common enqueue is one statement in autocommit mode on a pooled connection.
The connection goes back to the pool in transaction mode whatever happened, because everything
else that checks it out relies on BEGIN ... COMMIT; and the statement is all or nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy import Engine, create_engine, text

from dominus.errors import DatabaseError
from dominus.jobs import SqlJobStore
from dominus.jobs.metrics_model import ENQUEUED
from dominus.jobs.model import NewJob
from tests.contract.test_enqueue_and_claim import new_job

pytestmark = pytest.mark.postgres


@pytest.fixture
def backend() -> str:
    return "postgresql"


@pytest.fixture
def one_connection_engine(database_url: str) -> Iterator[Engine]:
    """An engine whose pool holds one connection, so that the next checkout gets the one the
    enqueue used."""
    engine = create_engine(database_url, pool_size=1, max_overflow=0)
    yield engine
    engine.dispose()


def _in_transaction_mode(engine: Engine) -> bool:
    pooled = engine.raw_connection()
    try:
        raw = pooled.driver_connection
        assert isinstance(raw, psycopg.Connection)
        return raw.autocommit is False
    finally:
        pooled.close()


def test_the_connection_goes_back_in_transaction_mode(one_connection_engine: Engine) -> None:
    store = SqlJobStore(one_connection_engine)
    store.enqueue([new_job(), new_job()], datetime.now(UTC))
    assert _in_transaction_mode(one_connection_engine)
    # And a caller's transaction on it still rolls back.
    with one_connection_engine.connect() as connection:
        connection.execute(text("DELETE FROM job_queue"))
        connection.rollback()
        assert connection.execute(text("SELECT count(*) FROM job_queue")).scalar_one() == 2


def test_a_refused_batch_writes_nothing_and_leaves_the_connection_usable(
    one_connection_engine: Engine,
) -> None:
    store = SqlJobStore(one_connection_engine)
    too_long = NewJob("x" * 300, {}, 0, 3, datetime.now(UTC))  # job_type is varchar(200)
    with pytest.raises(DatabaseError):
        store.enqueue([new_job(), too_long], datetime.now(UTC))
    assert _in_transaction_mode(one_connection_engine)
    assert store.list_jobs() == []
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 0
    store.enqueue([new_job()], datetime.now(UTC))
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 1
