"""Fenced handler transactions (ADR 0024), on both backends: a handler's own writes commit only
while its attempt still holds the job's claim, and can complete the job in the same transaction.

The handler's rows here live in a scratch table of the test's own: the engine knows no domain.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, insert, select

from dominus.errors import ClaimLostError
from dominus.jobs import (
    AbortReason,
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.abort import AbortSignal
from dominus.jobs.context import HandlerTransactions, ProgressReporter
from dominus.jobs.model import Claim, Completed, Job
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


MAX_AGE = 60.0

scratch = MetaData()
handler_rows = Table(
    "handler_rows",
    scratch,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("job_id", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("note", String(100), nullable=False),
)


@pytest.fixture(autouse=True)
def scratch_table(engine: Engine) -> Iterator[None]:
    scratch.create_all(engine)
    yield
    scratch.drop_all(engine)


def no_delay(_job_type: str, _attempt: int) -> float:
    return 0.0


def rows(engine: Engine) -> list[tuple[int, int, str]]:
    with engine.connect() as connection:
        result = connection.execute(
            select(handler_rows.c.job_id, handler_rows.c.attempt, handler_rows.c.note).order_by(
                handler_rows.c.id
            )
        )
        return [(row.job_id, row.attempt, row.note) for row in result]


def write(store: SqlJobStore, claim: Claim, note: str) -> None:
    with store.fenced_transaction(claim) as transaction:
        transaction.connection.execute(
            insert(handler_rows).values(job_id=claim.job_id, attempt=claim.attempt, note=note)
        )


def claim_one(store: SqlJobStore, worker: str, at: float = 0) -> Job:
    [job] = store.claim(worker, ["diag.noop"], 1, T0 + timedelta(seconds=at))
    return job


def reclaimed_and_claimed_again(store: SqlJobStore, first: Job) -> Job:
    """The first attempt's worker went silent: a reaper takes the job back, w2 claims it."""
    later = MAX_AGE + 1
    [reclaimed] = store.reclaim_stale(T0 + timedelta(seconds=later), MAX_AGE, no_delay)
    assert reclaimed.job_id == first.id
    second = claim_one(store, "w2", at=later)
    assert second.id == first.id and second.attempts == first.attempts + 1
    return second


def context_for(store: SqlJobStore, job: Job, clock: FakeClock) -> JobContext:
    abort = AbortSignal()
    reporter = ProgressReporter(job.claim, store.record_progress, clock, 1.0, on_lost=lambda: None)
    return JobContext(
        job=job,
        abort=abort,
        logger=None,  # type: ignore[arg-type]
        progress_reporter=reporter,
        transactions=HandlerTransactions(store, job, clock, abort, reporter),
    )


def test_writes_under_a_held_claim_commit(store: SqlJobStore, engine: Engine) -> None:
    store.enqueue([new_job()], T0)
    job = claim_one(store, "w1")
    write(store, job.claim, "first")
    assert rows(engine) == [(job.id, 1, "first")]


def test_a_reclaimed_attempts_late_write_is_refused_and_the_new_attempts_data_stays(
    store: SqlJobStore, engine: Engine
) -> None:
    store.enqueue([new_job()], T0)
    first = claim_one(store, "w1")
    write(store, first.claim, "attempt 1 checkpoint")
    second = reclaimed_and_claimed_again(store, first)
    write(store, second.claim, "attempt 2 checkpoint")

    with pytest.raises(ClaimLostError, match=f"job {first.id}: attempt 1 of worker w1"):
        write(store, first.claim, "attempt 1, too late")

    assert rows(engine) == [
        (first.id, 1, "attempt 1 checkpoint"),
        (first.id, 2, "attempt 2 checkpoint"),
    ]
    job = store.get_job(first.id)
    assert (job.status, job.locked_by, job.attempts) == (JobStatus.RUNNING, "w2", 2)


def test_a_claim_lost_during_the_transaction_rolls_back_all_of_it(
    store: SqlJobStore, engine: Engine, backend: str
) -> None:
    """The fence is checked again just before COMMIT, holding the job row's lock."""
    store.enqueue([new_job()], T0)
    first = claim_one(store, "w1")
    reaper_done = threading.Event()

    def reclaim_meanwhile() -> None:
        store.reclaim_stale(T0 + timedelta(seconds=MAX_AGE + 1), MAX_AGE, no_delay)
        reaper_done.set()

    if backend == "postgresql":
        # PostgreSQL: the handler's transaction holds no lock on the job row until its last
        # check, so a reaper on another connection reclaims the job in the middle of it.
        with (
            pytest.raises(ClaimLostError),
            store.fenced_transaction(first.claim) as transaction,
        ):
            transaction.connection.execute(
                insert(handler_rows).values(job_id=first.id, attempt=1, note="half")
            )
            reclaim_meanwhile()
            assert reaper_done.is_set()
        assert rows(engine) == []
        assert store.get_job(first.id).status is JobStatus.PENDING
    else:
        # SQLite: the transaction holds the database's write lock from its start, so a reaper
        # can only come before it (the write is refused) or after it (the write was made while
        # the claim held). Here it waits for the COMMIT, then reclaims.
        reaper = threading.Thread(target=reclaim_meanwhile)
        with store.fenced_transaction(first.claim) as transaction:
            transaction.connection.execute(
                insert(handler_rows).values(job_id=first.id, attempt=1, note="whole")
            )
            reaper.start()
            assert not reaper_done.wait(0.3), "the reaper wrote inside the handler's transaction"
        reaper.join(30)
        assert reaper_done.is_set()
        assert rows(engine) == [(first.id, 1, "whole")]
        assert store.get_job(first.id).status is JobStatus.PENDING


def test_completing_in_the_transaction_completes_the_job_with_the_handlers_writes(
    store: SqlJobStore, engine: Engine, clock: FakeClock
) -> None:
    store.enqueue([new_job()], T0)
    job = claim_one(store, "w1")
    context = context_for(store, job, clock)
    clock.advance(2)
    with context.transaction() as connection:
        connection.execute(insert(handler_rows).values(job_id=job.id, attempt=1, note="result"))
        context.complete(connection, {"rows": 1})
        assert store.get_job(job.id).status is JobStatus.RUNNING  # not before COMMIT
    assert context.completed_in_transaction
    done = store.get_job(job.id)
    assert (done.status, done.result, done.finished_at) == (
        JobStatus.COMPLETED,
        {"rows": 1},
        T0 + timedelta(seconds=2),
    )
    assert rows(engine) == [(job.id, 1, "result")]
    assert store.job_events(job.id) == []
    assert store.metric_totals().counter("completed", "diag.noop") == 1.0
    # The same attempt's completion sent again finds it recorded and changes nothing: settling
    # is idempotent per claim (ADR 0030).
    later = clock.advance(1)
    accepted, _ = store.settle([Completed(job.claim, result={"other": 2})], later)
    assert accepted == [True]
    assert store.get_job(job.id) == done
    assert store.job_events(job.id) == []


def test_a_completion_that_rolls_back_leaves_the_job_running(
    store: SqlJobStore, engine: Engine, clock: FakeClock
) -> None:
    store.enqueue([new_job()], T0)
    job = claim_one(store, "w1")
    context = context_for(store, job, clock)
    with pytest.raises(RuntimeError, match="handler broke"), context.transaction() as connection:
        connection.execute(insert(handler_rows).values(job_id=job.id, attempt=1, note="x"))
        context.complete(connection, {"rows": 1})
        raise RuntimeError("handler broke")
    assert not context.completed_in_transaction
    assert store.get_job(job.id).status is JobStatus.RUNNING
    assert rows(engine) == []


def test_a_lost_attempt_cannot_complete_and_its_abort_signal_says_lost(
    store: SqlJobStore, engine: Engine, clock: FakeClock
) -> None:
    store.enqueue([new_job()], T0)
    first = claim_one(store, "w1")
    context = context_for(store, first, clock)
    second = reclaimed_and_claimed_again(store, first)
    with pytest.raises(ClaimLostError), context.transaction() as connection:
        context.complete(connection, "late")  # pragma: no cover - refused at the start
    assert context.abort.reason is AbortReason.LOST
    job = store.get_job(first.id)
    assert (job.status, job.claim) == (JobStatus.RUNNING, second.claim)
    assert rows(engine) == []


class Note(BaseModel):
    note: str


def writing_registry(seen: list[Any]) -> HandlerRegistry:
    registry = HandlerRegistry()

    def handle(payload: Note, context: JobContext) -> str:
        with context.transaction() as connection:
            connection.execute(
                insert(handler_rows).values(
                    job_id=context.job.id, attempt=context.job.attempts, note=payload.note
                )
            )
            context.complete(connection, {"wrote": payload.note})
        seen.append(context.job.id)
        return "ignored: the job was completed in the transaction"

    registry.register("note.write", handle, Note)
    return registry


def test_a_worker_records_nothing_more_for_a_job_its_handler_completed(
    store: SqlJobStore, engine: Engine
) -> None:
    seen: list[Any] = []
    registry = writing_registry(seen)
    queue = JobQueue(store, registry)
    ids = [queue.enqueue_job("note.write", {"note": f"n{n}"}).job_id for n in range(3)]
    worker = Worker(store, registry, WorkerConfig(concurrency=2, poll_interval_seconds=0.05))
    assert drain(worker) == 3
    assert worker.idle
    for job_id in ids:
        job = store.get_job(job_id)
        assert job.status is JobStatus.COMPLETED
        assert job.result == {"wrote": job.payload["note"]}
        assert EventKind.LOST not in [event.kind for event in store.job_events(job_id)]
    assert sorted(rows(engine)) == sorted((job_id, 1, f"n{n}") for n, job_id in enumerate(ids))
    assert store.metric_totals().counter("completed", "note.write") == 3.0
