"""PostgreSQL: the completion statement is planned for the batch at hand, never from a generic
plan. psycopg prepares a statement after five executions on a connection, and PostgreSQL then
settles on a generic plan that guesses 10 rows for an unnested parameter array: for the
completion that was a nested loop unnesting the whole batch once per running row of every worker,
whose cost grew with running rows × batch size (bench/pg_profile.py; bench/RESULTS.md)."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine

from dominus.jobs import SqlJobStore
from dominus.jobs.model import Completed, Job
from dominus.jobs.sql.postgres_backend import PostgresBackend
from tests.support.clock import T0
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("postgresql")

ROUNDS = 8  # more than psycopg's prepare threshold (5)


def _completed(job: Job) -> Completed:
    return Completed(job.claim, job_type=job.job_type, duration_seconds=0.001)


def _prepared_completions(connection: psycopg.Connection[Any]) -> list[str]:
    """The completion statements prepared on `connection` (the first line of each)."""
    rows = connection.execute("SELECT statement FROM pg_prepared_statements").fetchall()
    statements = [" ".join(str(row[0]).split()) for row in rows]
    return [statement[:80] for statement in statements if "WITH done AS" in statement]


def _claimed(store: SqlJobStore, count: int) -> list[Job]:
    store.enqueue([new_job() for _ in range(count)], T0)
    return store.claim("w1", ["diag.noop"], count, T0)


def test_the_worker_loops_completions_are_never_prepared(store: SqlJobStore) -> None:
    jobs = _claimed(store, ROUNDS * 3)
    for start in range(0, len(jobs), 3):  # the common path: the loop's own connection
        store.settle([_completed(job) for job in jobs[start : start + 3]], T0)
    backend = store._backend
    assert isinstance(backend, PostgresBackend)
    assert _prepared_completions(backend._loop._connection()) == []
    claimed_again = store.claim("w1", ["diag.noop"], 1, T0)  # the connection still works
    assert claimed_again == []


def test_completions_in_a_callers_transaction_are_never_prepared(
    store: SqlJobStore, engine: Engine
) -> None:
    jobs = _claimed(store, ROUNDS * 2)
    backend = PostgresBackend(engine)
    with engine.begin() as connection:
        for start in range(0, len(jobs), 2):
            landed = backend.complete(
                connection, [_completed(job) for job in jobs[start : start + 2]], T0
            )
            assert landed == [True, True]
        raw = connection.connection.driver_connection
        assert isinstance(raw, psycopg.Connection)
        assert _prepared_completions(raw) == []
    assert {store.get_job(job.id).status.value for job in jobs} == {"completed"}
