"""PostgreSQL: the common enqueue runs in autocommit mode on a connection of its own
(`dominus.jobs.sql.driver_connections`), never on one of the pool's: everything else that
checks a pooled connection out relies on BEGIN ... COMMIT."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, create_engine, text

from dominus.jobs import SqlJobStore
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("postgresql")


@pytest.fixture
def one_connection_engine(database_url: str) -> Iterator[Engine]:
    """An engine whose pool holds one connection, so that every checkout gets that one."""
    engine = create_engine(database_url, pool_size=1, max_overflow=0)
    yield engine
    engine.dispose()


def test_the_pools_connections_stay_in_transaction_mode(one_connection_engine: Engine) -> None:
    store = SqlJobStore(one_connection_engine)
    store.enqueue([new_job(), new_job()], datetime.now(UTC))
    with one_connection_engine.connect() as connection:
        connection.execute(text("DELETE FROM job_queue"))
        connection.rollback()
        assert connection.execute(text("SELECT count(*) FROM job_queue")).scalar_one() == 2
