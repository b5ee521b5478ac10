"""Store contract: the monotonic counters and duration histograms behind /metrics."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import Engine, text

from dominus.jobs import JobStore
from dominus.jobs.metrics_model import (
    CANCELLED,
    COMPLETED,
    DEAD_LETTERED,
    ENQUEUED,
    FAILED,
    RECLAIMED,
)
from dominus.jobs.model import AttemptOutcome, Cancelled, Claim, Completed, Failed
from dominus.jobs.sql.backend import backend_for
from tests.support.clock import T0
from tests.support.jobs import fail, new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def completed(job_claim: Claim, seconds: float) -> AttemptOutcome:
    return Completed(
        job_claim,
        job_type="diag.noop",
        duration_seconds=seconds,
    )


def test_counters_follow_every_transition(store: JobStore) -> None:
    store.enqueue([new_job() for _ in range(6)], T0)
    store.enqueue([new_job(dedupe_key="k"), new_job(dedupe_key="k")], T0)  # one is not new
    jobs = store.claim("w1", ["diag.noop"], 7, T0)
    # The common path (all completed: the loop's own connection) and the general one (mixed).
    store.settle([completed(jobs[0].claim, 0.004), completed(jobs[1].claim, 2.5)], T0)
    failing = Failed(jobs[2].claim, error="x", retry_at=T0, job_type="diag.noop")
    cancelling = Cancelled(jobs[3].claim, job_type="diag.noop")
    store.settle([completed(jobs[4].claim, 7200), failing, cancelling], T0)
    store.request_cancel(store.enqueue([new_job()], T0)[0].job_id, T0)  # pending → cancelled
    store.reclaim_stale(T0 + timedelta(hours=1), 60, lambda _t, _a: 0)  # jobs 5 and 6
    totals = store.metric_totals()
    assert totals.counter(ENQUEUED, "diag.noop") == 8
    assert totals.counter(COMPLETED, "diag.noop") == 3
    assert totals.counter(FAILED, "diag.noop") == 1
    assert totals.counter(CANCELLED, "diag.noop") == 2
    assert totals.counter(RECLAIMED, "diag.noop") == 2
    assert totals.counter(DEAD_LETTERED, "diag.noop") == 0
    total_seconds, count = totals.durations["diag.noop"]
    assert count == 3 and abs(total_seconds - 7202.504) < 1e-6
    histogram = dict(totals.histograms["diag.noop"])
    assert histogram["0.01"] == 1  # 4 ms
    assert histogram["5"] == 2  # + 2.5 s (cumulative)
    assert histogram["3600"] == 2
    assert histogram["+Inf"] == 3  # + two hours


def test_dead_letters_are_counted_on_both_paths(store: JobStore) -> None:
    store.enqueue([new_job(max_attempts=1), new_job(max_attempts=1)], T0)
    first, second = store.claim("w1", ["diag.noop"], 2, T0)
    store.settle([fail(first.claim)], T0)
    store.reclaim_stale(T0 + timedelta(hours=1), 60, lambda _t, _a: 0)
    totals = store.metric_totals()
    assert totals.counter(DEAD_LETTERED, "diag.noop") == 2
    assert totals.counter(FAILED, "diag.noop") == 1
    assert totals.counter(RECLAIMED, "diag.noop") == 1
    assert second.id != first.id


def test_counters_never_fall_when_rows_go(store: JobStore, engine: Engine) -> None:
    store.enqueue([new_job()], T0)
    [job] = store.claim("w1", ["diag.noop"], 1, T0)
    store.settle([completed(job.claim, 1.0)], T0)
    delete_jobs_as_pruning_does(engine, "TRUE")
    totals = store.metric_totals()
    assert totals.counter(COMPLETED, "diag.noop") == 1
    assert totals.counter(ENQUEUED, "diag.noop") == 1


def delete_jobs_as_pruning_does(engine: Engine, where: str) -> None:
    """Delete job rows the way the one thing that deletes them does: enqueues folded into the
    counters before, and again after, in the deleting transaction (ADR 0036)."""
    backend = backend_for(engine)
    with engine.begin() as connection:
        backend.fold_enqueues(connection)
        connection.execute(text(f"DELETE FROM job_queue WHERE {where}"))
        backend.fold_enqueues(connection)


def test_enqueues_are_counted_on_every_insert_path(store: JobStore) -> None:
    store.enqueue([new_job()], T0)
    store.enqueue([new_job(), new_job()], T0)
    store.enqueue([new_job(dedupe_key="k")], T0)
    store.enqueue([new_job(dedupe_key="k")], T0)  # the active job is returned: not enqueued
    store.enqueue([new_job("diag.sleep")], T0, max_depth=100)
    totals = store.metric_totals()
    assert totals.counter(ENQUEUED, "diag.noop") == 4
    assert totals.counter(ENQUEUED, "diag.sleep") == 1


def test_maintenance_folds_enqueues_without_changing_the_totals(store: JobStore) -> None:
    store.enqueue([new_job() for _ in range(3)], T0)
    before = store.metric_totals()
    store.maintain()
    store.enqueue([new_job()], T0)
    store.maintain()
    store.maintain()  # nothing new to fold
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 4
    assert before.counter(ENQUEUED, "diag.noop") == 3


def test_a_new_job_after_the_newest_rows_were_deleted_is_counted_once(
    store: JobStore, engine: Engine
) -> None:
    # SQLite gives a new row max(id) + 1: with the newest rows deleted, a new job can take a
    # deleted job's id. It must still be counted, once, and the deleted ones not again.
    ids = [result.job_id for result in store.enqueue([new_job() for _ in range(5)], T0)]
    store.maintain()
    delete_jobs_as_pruning_does(engine, f"id >= {ids[2]}")
    [again] = store.enqueue([new_job()], T0)
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 6
    store.maintain()
    delete_jobs_as_pruning_does(engine, f"id = {again.job_id}")
    store.enqueue([new_job(), new_job()], T0)
    store.maintain()
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 8
    delete_jobs_as_pruning_does(engine, "TRUE")  # all of them: ids start again at 1
    store.enqueue([new_job()], T0)
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 9
    store.maintain()
    assert store.metric_totals().counter(ENQUEUED, "diag.noop") == 9
