"""Workers vacuum job_queue beside autovacuum: on a server of the module's own with autovacuum on
(its naptime made long, so that autovacuum itself never runs during the test), a worker's
housekeeping first analyses the queue tables, then VACUUMs job_queue once it has
DEAD_TUPLES_THRESHOLD dead rows; a role that does not own the table leaves it to autovacuum."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import Engine, make_url

from dominus.db.engine import create_database_engine
from dominus.jobs import SqlJobStore
from dominus.jobs.sql.postgres_vacuum import DEAD_TUPLES_THRESHOLD
from dominus.schema.migrate import upgrade
from tests.support.dead_rows import dead_tuples, make_dead_rows
from tests.support.throwaway_postgres import ThrowawayPostgres, running

pytestmark = pytest.mark.postgres

VISITOR = "dominus_visitor"  # a role with rights on the tables, owning none of them


@pytest.fixture(scope="module")
def server() -> Iterator[ThrowawayPostgres]:
    instance = ThrowawayPostgres()
    instance.settings = {"autovacuum": "on", "autovacuum_naptime": "3600"}
    with running(instance):
        yield instance


@pytest.fixture
def database_url(server: ThrowawayPostgres, request: pytest.FixtureRequest) -> str:
    url = server.create_database(f"vacuum_{request.node.name[-40:].lower()}")
    engine = create_database_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    return url


@pytest.fixture
def owner(database_url: str) -> Iterator[SqlJobStore]:
    engine = create_database_engine(database_url)
    yield SqlJobStore(engine)
    engine.dispose()


@pytest.fixture
def visitor(database_url: str, owner: SqlJobStore) -> Iterator[SqlJobStore]:
    """The same database through a role that may read and write the tables but owns none."""
    with psycopg.connect(_conninfo(database_url), autocommit=True) as admin:
        if (
            admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (VISITOR,)).fetchone()
            is None
        ):
            admin.execute(f"CREATE ROLE {VISITOR} LOGIN")
        admin.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {VISITOR}")
        admin.execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {VISITOR}")
    url = make_url(database_url).set(username=VISITOR).render_as_string(hide_password=False)
    engine: Engine = create_database_engine(url)
    yield SqlJobStore(engine)
    engine.dispose()


def _conninfo(database_url: str) -> str:
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


def test_with_autovacuum_on_a_worker_vacuums_job_queue_once_it_has_enough_dead_rows(
    owner: SqlJobStore, database_url: str
) -> None:
    assert owner.maintain() == "analysed the queue tables (they had no statistics yet)"
    assert owner.maintain() is None  # analysed, and nothing dead: nothing to do
    make_dead_rows(owner, _conninfo(database_url), 2 * DEAD_TUPLES_THRESHOLD)

    assert owner.maintain() is None  # routine beside autovacuum: not news

    assert dead_tuples(owner) < DEAD_TUPLES_THRESHOLD


def test_a_role_that_does_not_own_job_queue_leaves_it_to_autovacuum(
    visitor: SqlJobStore, owner: SqlJobStore, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert owner.maintain() is not None  # analysed: statistics exist
    make_dead_rows(owner, _conninfo(database_url), 2 * DEAD_TUPLES_THRESHOLD)

    with caplog.at_level(logging.INFO, logger="dominus.worker"):
        assert visitor.maintain() is None
        assert visitor.maintain() is None

    assert dead_tuples(owner) >= DEAD_TUPLES_THRESHOLD  # nothing vacuumed, nothing held back
    said = [record.getMessage() for record in caplog.records]
    assert said == [
        "this database role does not own job_queue, so workers leave vacuuming the queue to "
        "autovacuum"
    ]
