"""Dead row versions in `job_queue` on PostgreSQL, for the tests of the workers' VACUUM."""

from __future__ import annotations

import time

import psycopg
from sqlalchemy import text

from dominus.jobs import SqlJobStore
from dominus.jobs.sql.postgres_vacuum import DEAD_TUPLES_THRESHOLD
from tests.support.clock import T0
from tests.support.jobs import new_job


def dead_tuples(store: SqlJobStore) -> int:
    with store.engine.connect() as connection:
        value = connection.execute(
            text("SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'job_queue'")
        ).scalar_one()
    return int(value)


def make_dead_rows(store: SqlJobStore, conninfo: str, count: int) -> None:
    """`count` job rows, each updated once: a dead row version each."""
    store.enqueue([new_job() for _ in range(count)], T0)
    with psycopg.connect(conninfo) as connection:
        connection.execute("UPDATE job_queue SET updated_at = now()")
        connection.execute("SELECT pg_stat_force_next_flush()")  # counted at this commit
    deadline = time.monotonic() + 30
    while dead_tuples(store) < DEAD_TUPLES_THRESHOLD:
        assert time.monotonic() < deadline, "the server never counted the dead rows"
        time.sleep(0.05)
