"""PostgreSQL: NOTIFY sent by the store, the LISTEN thread (with reconnects), the database clock."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, make_url, text

from dominus.cli.runtime import open_runtime
from dominus.jobs import DatabaseClock, JobQueue, SqlJobStore
from dominus.jobs.model import NewJob
from dominus.jobs.notifications import PostgresListener
from dominus.jobs.notifications_channels import (
    CANCEL_CHANNEL,
    JOBS_CHANNEL,
    due_from_payload,
    due_payload,
)

pytestmark = pytest.mark.backends("postgresql")


@pytest.fixture
def conninfo(database_url: str) -> str:
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


@pytest.fixture
def listening(conninfo: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f"LISTEN {JOBS_CHANNEL}")
        connection.execute(f"LISTEN {CANCEL_CHANNEL}")
        yield connection


def received(connection: psycopg.Connection, wait: float = 0.5) -> list[tuple[str, str]]:
    return [(note.channel, note.payload) for note in connection.notifies(timeout=wait)]


def new_job(job_type: str = "diag.noop", run_at: datetime | None = None) -> NewJob:
    return NewJob(
        job_type=job_type,
        payload={},
        priority=0,
        max_attempts=3,
        run_at=run_at or datetime.now(UTC) - timedelta(seconds=1),
    )


def test_enqueue_notifies_on_commit_and_never_on_rollback(
    store: SqlJobStore, engine: Engine, listening: psycopg.Connection
) -> None:
    class CallerFailedError(Exception):
        pass

    with pytest.raises(CallerFailedError), engine.begin() as connection:
        store.enqueue([new_job()], datetime.now(UTC), connection=connection)
        raise CallerFailedError
    assert received(listening) == []
    now = datetime.now(UTC)
    later, sooner = now + timedelta(seconds=2), now + timedelta(seconds=1)
    store.enqueue([new_job("diag.sleep", later), new_job(run_at=sooner)], now)
    # The payload: when the earliest of them falls due (ADR 0062).
    assert received(listening) == [(JOBS_CHANNEL, due_payload(sooner))]
    store.enqueue([new_job(run_at=later)], now)  # one job: the single-statement enqueue
    assert received(listening) == [(JOBS_CHANNEL, due_payload(later))]


def test_a_cancel_request_notifies_the_owning_worker(
    store: SqlJobStore, listening: psycopg.Connection
) -> None:
    now = datetime.now(UTC)
    [result] = store.enqueue([new_job()], now)
    store.claim("host:1:abc", ["diag.noop"], 1, now)
    received(listening, wait=0.2)  # the enqueue's own notification
    store.request_cancel(result.job_id, now)
    assert received(listening) == [(CANCEL_CHANNEL, "host:1:abc")]


def wait_for(condition: Callable[[], bool], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_the_listener_wakes_the_worker_and_survives_losing_its_connection(
    conninfo: str, store: SqlJobStore, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    jobs_seen = threading.Event()
    cancels_seen = threading.Event()
    caplog.set_level(logging.INFO, logger="dominus.worker")
    listener = PostgresListener(conninfo)
    notified_due: list[datetime | None] = []

    def on_jobs(due_at: datetime | None) -> None:
        notified_due.append(due_at)
        jobs_seen.set()

    listener.start(on_jobs, cancels_seen.set, worker_id="me")
    try:
        wait_for(lambda: listener.connected)
        # Woken once as LISTEN takes effect, for anything enqueued before it did.
        assert jobs_seen.wait(5)
        assert notified_due == [None]
        notified_due.clear()
        jobs_seen.clear()
        job = new_job()
        store.enqueue([job], datetime.now(UTC))
        assert jobs_seen.wait(5)
        assert notified_due == [job.run_at]  # passed on to the worker
        jobs_seen.clear()
        with engine.begin() as connection:  # a cancel meant for another worker is ignored
            connection.execute(text(f"SELECT pg_notify('{CANCEL_CHANNEL}', 'someone-else')"))
            connection.execute(text(f"SELECT pg_notify('{CANCEL_CHANNEL}', 'me')"))
        assert cancels_seen.wait(5)

        # Kill the LISTEN connection from the server side, as a restart or a network cut would.
        with engine.begin() as connection:
            killed = connection.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE query LIKE 'LISTEN%' AND datname = current_database()"
                )
            ).scalar_one()
        assert killed == 1
        wait_for(lambda: "LISTEN connection lost" in caplog.text)
        wait_for(lambda: listener.connected and "re-established" in caplog.text)
        assert jobs_seen.wait(5)  # woken once after the reconnect, for what it may have missed
        assert notified_due[-1] is None  # not knowing when: look now
        jobs_seen.clear()
        store.enqueue([new_job()], datetime.now(UTC))
        assert jobs_seen.wait(5)
    finally:
        listener.close()


def test_the_database_clock_follows_the_server_not_the_host(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = DatabaseClock(engine, resync_seconds=3600)
    first = clock()
    with engine.connect() as connection:
        server = connection.execute(text("SELECT clock_timestamp()")).scalar_one()
    assert abs((server - first).total_seconds()) < 1
    # Extrapolated between syncs, without asking the server again.
    queries: list[str] = []
    monkeypatch.setattr(engine, "connect", lambda: queries.append("connect"))
    later = clock()
    assert queries == []
    assert timedelta(0) <= later - first < timedelta(seconds=5)


def test_jobs_enqueued_through_the_database_clock_are_due_for_workers_on_it(
    engine: Engine, store: SqlJobStore, queue: JobQueue
) -> None:
    clock = DatabaseClock(engine)
    database_queue = JobQueue(store, queue.registry, clock=clock)
    job_id = database_queue.enqueue_job("diag.noop").job_id
    [claimed] = store.claim("w", ["diag.noop"], 1, clock())
    assert claimed.id == job_id


def test_a_batch_enqueue_is_one_copy_whatever_its_size(
    store: SqlJobStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements: list[str] = []
    execute, copy = psycopg.Cursor.execute, psycopg.Cursor.copy

    def record(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        # At the driver: the common enqueue goes straight to a psycopg connection.
        statements.append(" ".join(str(query).split()))
        return execute(cursor, query, *args, **kwargs)

    def record_copy(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(" ".join(str(query).split()))
        return copy(cursor, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", record)
    monkeypatch.setattr(psycopg.Cursor, "copy", record_copy)
    batch = [NewJob("diag.noop", {"n": n}, n % 7, 3, datetime.now(UTC)) for n in range(20_000)]
    results = store.enqueue(batch, datetime.now(UTC))
    monkeypatch.undo()
    assert [sql for sql in statements if "INSERT INTO job_queue" in sql] == []
    assert len([sql for sql in statements if sql.startswith("COPY job_queue")]) == 1
    assert len([sql for sql in statements if "nextval" in sql]) == 1
    ids = [result.job_id for result in results]
    assert ids == sorted(ids) and len(set(ids)) == 20_000
    for n in (0, 1, 9_999, 19_999):  # each id is its own job's
        job = store.get_job(ids[n])
        assert (job.payload, job.priority) == ({"n": n}, n % 7)


def test_workers_on_postgresql_keep_time_by_the_server_whatever_the_host_clock_says(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A host whose clock is an hour ahead: with its own clock it would see every other host's
    # heartbeats as an hour old and reclaim their live jobs.
    skewed = datetime.now(UTC) + timedelta(hours=1)
    monkeypatch.setattr("dominus.jobs.clock.utc_now", lambda: skewed)
    monkeypatch.setenv("DATABASE_URL", database_url)
    runtime = open_runtime()
    assert isinstance(runtime.clock, DatabaseClock)
    with runtime.engine.connect() as connection:
        server = connection.execute(text("SELECT clock_timestamp()")).scalar_one()
    assert abs((runtime.clock() - server).total_seconds()) < 1
    runtime.engine.dispose()


def test_a_jobs_payload_is_read_as_a_due_time_or_as_none() -> None:
    due_at = datetime(2026, 12, 6, 10, 0, 0, 123456, tzinfo=UTC)
    assert due_from_payload(due_payload(due_at)) == due_at
    assert due_payload(None) == ""
    for unreadable in ("", "soon", "2026-12-06T10:00:00"):  # no offset: not a moment
        assert due_from_payload(unreadable) is None
