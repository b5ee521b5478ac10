"""The PostgreSQL claim reads its rows in binary: the values (every column of a job, each set or
NULL) and the jobs made from them are the ones the rows read as text gave."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine

from dominus.jobs import SqlJobStore
from dominus.jobs.model import ClaimRequest, NewJob
from dominus.jobs.sql.postgres_backend import _claimed_jobs
from dominus.jobs.sql.postgres_claims import (
    LOCK_KEYS,
    claim_parameters,
    claim_statement,
    lock_parameters,
)

pytestmark = pytest.mark.backends("postgresql")

NOW = datetime(2026, 12, 6, 8, 0, 0, 123456, tzinfo=UTC)


def _fill(store: SqlJobStore, engine: Engine) -> None:
    plain = NewJob("t", {"n": 1, "s": "café"}, 0, 3, NOW - timedelta(seconds=5))
    every_option = NewJob(
        "t",
        {"items": [1.5, None, True]},
        7,
        5,
        NOW - timedelta(days=400, microseconds=1),
        dedupe_key="d-1",
        timeout_seconds=2.75,
        queue="mail",
        concurrency_key="account-1",
        concurrency_limit=3,
        rate_key="api",
    )
    store.enqueue([plain, every_option], NOW)
    with engine.begin() as connection:
        raw = connection.connection.driver_connection
        assert isinstance(raw, psycopg.Connection)
        # What an earlier attempt leaves on a job that is pending again.
        raw.execute(
            """UPDATE job_queue SET result = '{"r": [1, "x"]}', progress = '{"p": 0.5}',
                      last_error = 'boom', failure_count = 1, attempts = 1,
                      started_at = %(at)s, finished_at = %(at)s, heartbeat_at = %(at)s,
                      cancel_requested_at = NULL, locked_by = NULL
                WHERE concurrency_key IS NOT NULL""",
            {"at": NOW - timedelta(hours=1)},
        )


def _rows(raw: psycopg.Connection[Any], request: ClaimRequest, *, binary: bool) -> list[Any]:
    raw.execute(LOCK_KEYS, lock_parameters([request], NOW))  # the keyed job's key
    rows = raw.execute(
        claim_statement(request), claim_parameters(request, NOW), binary=binary
    ).fetchall()
    raw.rollback()
    return sorted(rows, key=lambda row: row[0])


@pytest.mark.parametrize("queues", [None, ["default", "mail"]])
def test_binary_rows_are_the_text_rows(
    store: SqlJobStore, engine: Engine, queues: list[str] | None
) -> None:
    _fill(store, engine)
    request = ClaimRequest("w1", ["t"], 10, queues)
    pooled = engine.raw_connection()
    try:
        raw = pooled.driver_connection
        assert isinstance(raw, psycopg.Connection)
        text_rows = _rows(raw, request, binary=False)
        binary_rows = _rows(raw, request, binary=True)
    finally:
        pooled.close()
    assert len(text_rows) == 2
    assert binary_rows == text_rows
    for text_row, binary_row in zip(text_rows, binary_rows, strict=True):
        assert [type(value) for value in binary_row] == [type(value) for value in text_row]
        assert [getattr(value, "tzinfo", None) for value in binary_row] == [
            getattr(value, "tzinfo", None) for value in text_row
        ]
    assert _claimed_jobs(binary_rows) == _claimed_jobs(text_rows)
