"""Store contract: the monotonic counters and duration histograms behind /metrics."""

from __future__ import annotations

from datetime import timedelta

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
from tests.conftest import T0
from tests.contract.test_enqueue_and_claim import new_job
from tests.contract.test_transitions import fail


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
    with engine.begin() as connection:  # what pruning finished jobs will do
        connection.execute(text("DELETE FROM job_queue"))
    totals = store.metric_totals()
    assert totals.counter(COMPLETED, "diag.noop") == 1
    assert totals.counter(ENQUEUED, "diag.noop") == 1
