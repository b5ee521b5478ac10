"""PostgreSQL housekeeping with an old snapshot pinning the xmin horizon: the VACUUM it makes
useless is run once, the session that pins it is named once at WARNING, and no VACUUM runs
again until that transaction ends; then one runs at once. (The test server runs with autovacuum
off; test_postgres_vacuum_autovacuum_on.py runs a server of its own with it on.)"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import pytest
from sqlalchemy import make_url

from dominus.jobs import SqlJobStore
from dominus.jobs.sql.postgres_vacuum import DEAD_TUPLES_THRESHOLD
from tests.support.dead_rows import dead_tuples, make_dead_rows

pytestmark = pytest.mark.backends("postgresql")


def test_an_old_snapshot_is_named_once_and_vacuum_waits_for_its_end(
    store: SqlJobStore, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert store.maintain() is not None  # the first VACUUM (ANALYZE): statistics now exist
    conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    pinning: psycopg.Connection[Any] = psycopg.connect(conninfo, application_name="report")
    pinning.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    pinning.execute("SELECT count(*) FROM job_queue").fetchone()  # the snapshot is taken
    pid = pinning.info.backend_pid
    try:
        make_dead_rows(store, conninfo, 2 * DEAD_TUPLES_THRESHOLD)
        with caplog.at_level(logging.INFO, logger="dominus.worker"):
            assert store.maintain() is None  # vacuumed in vain: said, not reported as done
            warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
            [warning] = warnings
            assert f"backend pid {pid} (report)" in warning
            assert "idle in transaction" in warning
            assert "cannot remove" in warning
            caplog.clear()
            for _ in range(3):
                assert store.maintain() is None  # not again while the snapshot holds
            assert caplog.records == []
    finally:
        pinning.rollback()
        pinning.close()
    with caplog.at_level(logging.INFO, logger="dominus.worker"):
        done = store.maintain()
    assert done is not None and "vacuumed" in done
    assert any("has ended" in record.getMessage() for record in caplog.records)
    assert dead_tuples(store) < DEAD_TUPLES_THRESHOLD
