"""Store contract: enqueue, dedupe, queue depth, transactional enqueue, claim."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import Engine

from dominus.errors import QueueFullError
from dominus.jobs import JobStatus, JobStore
from dominus.jobs.metrics_model import ENQUEUED
from dominus.jobs.model import NewJob
from tests.support.clock import T0
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_enqueue_creates_pending_jobs_with_their_fields(store: JobStore) -> None:
    [result] = store.enqueue([new_job(priority=7, max_attempts=5)], T0)
    assert result.created
    job = store.get_job(result.job_id)
    assert job.status is JobStatus.PENDING
    assert (job.job_type, job.payload, job.priority) == ("diag.noop", {"n": 1}, 7)
    assert (job.attempts, job.max_attempts, job.failure_count) == (0, 5, 0)
    assert job.created_at == job.run_at == T0
    assert job.created_at.utcoffset() == timedelta(0)
    assert job.locked_by is None and job.started_at is None


def test_batch_enqueue_returns_ids_in_order(store: JobStore) -> None:
    results = store.enqueue([new_job(priority=index) for index in range(50)], T0)
    ids = [result.job_id for result in results]
    assert ids == sorted(ids) and len(set(ids)) == 50
    assert [store.get_job(job_id).priority for job_id in ids] == list(range(50))


@pytest.mark.parametrize("batch_size", [1, 3, 300])
def test_every_field_of_an_enqueued_job_is_stored_as_given(
    store: JobStore, batch_size: int
) -> None:
    # Each size takes its own path on some backend (PostgreSQL: one statement for one job, COPY
    # for a batch); each must store the same thing.
    payload = {"text": 'naïve ☃ \\ "q" \t', "n": [1, 2.5, None, True], "nested": {"a": {}}}
    jobs = [
        NewJob(
            job_type="diag.noop" if index % 2 else "diag.sleep",
            payload={**payload, "index": index},
            priority=index % 7 - 3,
            max_attempts=index % 4 + 1,
            run_at=T0 + timedelta(seconds=index, microseconds=index),
            timeout_seconds=None if index % 3 else 1.5 + index,
        )
        for index in range(batch_size)
    ]
    results = store.enqueue(jobs, T0)
    ids = [result.job_id for result in results]
    assert ids == sorted(ids) and len(set(ids)) == batch_size
    for job, job_id in zip(jobs, ids, strict=True):
        stored = store.get_job(job_id)
        assert (stored.job_type, stored.payload, stored.priority) == (
            job.job_type,
            job.payload,
            job.priority,
        )
        assert (stored.max_attempts, stored.timeout_seconds) == (
            job.max_attempts,
            job.timeout_seconds,
        )
        assert (stored.run_at, stored.created_at, stored.status) == (
            job.run_at,
            T0,
            JobStatus.PENDING,
        )
    totals = store.metric_totals()
    assert (
        totals.counter(ENQUEUED, "diag.noop") + totals.counter(ENQUEUED, "diag.sleep") == batch_size
    )


def test_dedupe_returns_the_active_job(store: JobStore) -> None:
    [first] = store.enqueue([new_job(dedupe_key="k")], T0)
    [second] = store.enqueue([new_job(dedupe_key="k")], T0)
    assert second.job_id == first.job_id and not second.created
    [other] = store.enqueue([new_job(dedupe_key="other")], T0)
    assert other.created and other.job_id != first.job_id


def test_dedupe_within_one_batch(store: JobStore) -> None:
    results = store.enqueue([new_job(dedupe_key="k"), new_job(dedupe_key="k")], T0)
    assert results[0].created and not results[1].created
    assert results[0].job_id == results[1].job_id


def test_dedupe_key_is_free_again_once_the_job_finished(store: JobStore) -> None:
    [first] = store.enqueue([new_job(dedupe_key="k")], T0)
    store.request_cancel(first.job_id, T0)
    [second] = store.enqueue([new_job(dedupe_key="k")], T0)
    assert second.created and second.job_id != first.job_id


def test_dedupe_is_safe_under_concurrent_enqueues(store: JobStore) -> None:
    ids: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def enqueue() -> None:
        barrier.wait()
        for _ in range(20):
            [result] = store.enqueue([new_job(dedupe_key="race")], T0)
            with lock:
                ids.append(result.job_id)

    threads = [threading.Thread(target=enqueue) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 1
    assert len(store.list_jobs(limit=100)) == 1


def test_queue_depth_limit_refuses_whole_batches(store: JobStore) -> None:
    store.enqueue([new_job(), new_job()], T0, max_depth=3)
    with pytest.raises(QueueFullError, match="JOB_QUEUE_MAX_DEPTH"):
        store.enqueue([new_job(), new_job()], T0, max_depth=3)
    assert len(store.list_jobs()) == 2
    store.enqueue([new_job()], T0, max_depth=3)
    with pytest.raises(QueueFullError):
        store.enqueue([new_job()], T0, max_depth=3)


def test_finished_jobs_do_not_count_towards_queue_depth(store: JobStore) -> None:
    [result] = store.enqueue([new_job()], T0, max_depth=1)
    store.request_cancel(result.job_id, T0)
    store.enqueue([new_job()], T0, max_depth=1)


def test_transactional_enqueue_commits_and_rolls_back_with_the_caller(
    store: JobStore, engine: Engine
) -> None:
    with engine.begin() as connection:
        [kept] = store.enqueue([new_job()], T0, connection=connection)

    class CallerFailedError(Exception):
        pass

    with pytest.raises(CallerFailedError), engine.begin() as connection:
        store.enqueue([new_job()], T0, connection=connection)
        raise CallerFailedError
    assert [job.id for job in store.list_jobs()] == [kept.job_id]


def test_claim_orders_by_priority_then_run_at(store: JobStore) -> None:
    low_old = store.enqueue([new_job(priority=0, run_at_offset=-10)], T0)[0].job_id
    high_new = store.enqueue([new_job(priority=5, run_at_offset=-1)], T0)[0].job_id
    high_old = store.enqueue([new_job(priority=5, run_at_offset=-5)], T0)[0].job_id
    low_new = store.enqueue([new_job(priority=0, run_at_offset=-2)], T0)[0].job_id
    claimed = store.claim("w1", ["diag.noop"], 10, T0)
    assert [job.id for job in claimed] == [high_old, high_new, low_old, low_new]


def test_claim_takes_at_most_limit_and_only_due_jobs_of_its_types(store: JobStore) -> None:
    store.enqueue([new_job() for _ in range(5)], T0)
    store.enqueue([new_job(run_at_offset=60)], T0)
    store.enqueue([new_job("diag.sleep")], T0)
    first = store.claim("w1", ["diag.noop"], 3, T0)
    second = store.claim("w1", ["diag.noop"], 10, T0)
    assert (len(first), len(second)) == (3, 2)
    assert store.claim("w1", ["diag.noop"], 10, T0) == []
    assert len(store.claim("w1", ["diag.noop"], 10, T0 + timedelta(seconds=60))) == 1
    assert len(store.claim("w1", ["diag.sleep", "diag.noop"], 10, T0)) == 1


def test_claim_stamps_the_claim(store: JobStore) -> None:
    store.enqueue([new_job()], T0)
    [job] = store.claim("host:1:abc", ["diag.noop"], 1, T0 + timedelta(seconds=1))
    assert job.status is JobStatus.RUNNING
    assert job.locked_by == "host:1:abc" and job.attempts == 1
    assert job.started_at == job.heartbeat_at == T0 + timedelta(seconds=1)
    assert store.get_job(job.id) == job


def test_jobs_claimed_together_read_as_stored_whichever_timestamps_they_share(
    store: JobStore,
) -> None:
    # One claim reads many timestamps that are the same text (a batch's `created_at`, a job's
    # `run_at` equal to it, the claim's own stamps) and some that are not: each job claimed is
    # the job as it is read back afterwards.
    offsets = [0, 0, -3, -3, -7, 0]
    store.enqueue([new_job(run_at_offset=offset) for offset in offsets], T0)
    store.enqueue([new_job(run_at_offset=-1)], T0 - timedelta(seconds=2))
    claimed = store.claim("w1", ["diag.noop"], 10, T0 + timedelta(seconds=1))
    assert len(claimed) == len(offsets) + 1
    assert claimed == [store.get_job(job.id) for job in claimed]
    assert sorted(job.run_at - T0 for job in claimed) == sorted(
        [timedelta(seconds=offset) for offset in offsets] + [timedelta(seconds=-1)]
    )


def test_concurrent_claims_never_hand_out_a_job_twice(store: JobStore) -> None:
    store.enqueue([new_job() for _ in range(400)], T0)
    claimed: list[int] = []
    lock = threading.Lock()

    def claimer(worker_id: str) -> None:
        while True:
            jobs = store.claim(worker_id, ["diag.noop"], 7, T0)
            if not jobs:
                return
            with lock:
                claimed.extend(job.id for job in jobs)

    threads = [threading.Thread(target=claimer, args=(f"w{index}",)) for index in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(claimed) == 400 and len(set(claimed)) == 400


def test_claim_with_zero_slots_or_no_types_claims_nothing(store: JobStore) -> None:
    store.enqueue([new_job()], T0)
    assert store.claim("w1", ["diag.noop"], 0, T0) == []
    assert store.claim("w1", [], 5, T0) == []


def test_batch_and_single_and_deduplicated_inserts_store_the_same_way(store: JobStore) -> None:
    # The three insert paths (batch, single row, dedupe) must store comparable timestamps: the
    # claim orders them by run_at, to the microsecond.
    whole_second = new_job(run_at_offset=-3)
    with_micros = new_job(run_at_offset=-2.5)
    deduplicated = new_job(run_at_offset=-2.75, dedupe_key="d")
    batch = store.enqueue([whole_second, new_job(run_at_offset=-1)], T0)
    single = store.enqueue([with_micros], T0)
    dedupe = store.enqueue([deduplicated], T0)
    claimed = store.claim("w1", ["diag.noop"], 10, T0)
    assert [job.id for job in claimed] == [
        batch[0].job_id,
        dedupe[0].job_id,
        single[0].job_id,
        batch[1].job_id,
    ]
    assert claimed[0].run_at == T0 - timedelta(seconds=3)
    assert claimed[2].run_at == T0 - timedelta(seconds=2.5)
    assert store.get_job(dedupe[0].job_id).run_at == T0 - timedelta(seconds=2.75)
