"""Store contract: every transition after the claim, fencing, reclaim, cancel, retry, DLQ."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dominus.errors import InvalidTransitionError, JobNotFoundError
from dominus.jobs import EventKind, JobStatus, JobStore
from dominus.jobs.model import (
    Cancelled,
    Claim,
    Completed,
    Interrupted,
    WorkerInfo,
)
from tests.support.clock import T0
from tests.support.jobs import claimed_job, fail, kinds, new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def at(seconds: float) -> object:
    return T0 + timedelta(seconds=seconds)


def no_delay(_job_type: str, _attempt: int) -> float:
    return 0.0


def test_complete_stores_the_result(store: JobStore) -> None:
    job = claimed_job(store)
    outcome = Completed(job.claim, result={"answer": 42})
    accepted, _ = store.settle([outcome], T0 + timedelta(seconds=2))
    assert accepted == [True]
    done = store.get_job(job.id)
    assert done.status is JobStatus.COMPLETED
    assert done.result == {"answer": 42}
    assert done.finished_at == T0 + timedelta(seconds=2)
    assert kinds(store, job.id) == []  # the happy path leaves no events


def test_settle_and_claim_in_one_transaction(store: JobStore) -> None:
    job = claimed_job(store)
    store.enqueue([new_job(), new_job()], T0)
    outcome = Completed(job.claim, result=None)
    accepted, claimed = store.settle([outcome], T0, claim_for=("w1", ["diag.noop"], 5))
    assert accepted == [True] and len(claimed) == 2


def test_failure_with_attempts_left_goes_back_to_pending_after_backoff(store: JobStore) -> None:
    job = claimed_job(store)
    store.settle([fail(job.claim, retry_in=10)], T0)
    retried = store.get_job(job.id)
    assert retried.status is JobStatus.PENDING
    assert retried.run_at == T0 + timedelta(seconds=10)
    assert (retried.attempts, retried.failure_count) == (1, 1)
    assert retried.last_error == "boom" and retried.locked_by is None
    assert kinds(store, job.id) == [EventKind.FAILED, EventKind.RETRY_SCHEDULED]
    failed_event = store.job_events(job.id)[0]
    assert failed_event.details == {"traceback": "Traceback: boom"}
    assert store.claim("w1", ["diag.noop"], 1, T0 + timedelta(seconds=9)) == []
    [again] = store.claim("w1", ["diag.noop"], 1, T0 + timedelta(seconds=10))
    assert again.attempts == 2


def test_exhausted_attempts_fail_the_job_and_write_one_dead_letter_entry(
    store: JobStore,
) -> None:
    store.enqueue([new_job(max_attempts=3)], T0)
    for attempt in range(1, 4):
        [job] = store.claim("w1", ["diag.noop"], 1, T0 + timedelta(seconds=100 * attempt))
        assert job.attempts == attempt
        store.settle([fail(job.claim, f"boom {attempt}", retry_in=0)], T0)
    failed = store.get_job(job.id)
    assert failed.status is JobStatus.FAILED and failed.finished_at is not None
    [entry] = store.list_dead_letters()
    assert (entry.job_id, entry.job_type, entry.attempts) == (job.id, "diag.noop", 3)
    assert [error.message for error in entry.errors] == ["boom 1", "boom 2", "boom 3"]
    assert [error.attempt for error in entry.errors] == [1, 2, 3]
    assert entry.errors[0].traceback == "Traceback: boom 1"
    assert entry.payload == {"n": 1} and entry.requeued_at is None
    assert kinds(store, job.id)[-2:] == [EventKind.FAILED, EventKind.DEAD_LETTERED]


def test_writes_are_fenced_on_the_claim(store: JobStore) -> None:
    job = claimed_job(store)
    stale = Claim(job.id, "someone-else", job.attempts)
    older_attempt = Claim(job.id, job.locked_by or "", job.attempts - 1)
    for claim in (stale, older_attempt):
        accepted, _ = store.settle([Completed(claim)], T0)
        assert accepted == [False]
        assert not store.record_progress(claim, {"x": 1}, T0)
    assert store.get_job(job.id).status is JobStatus.RUNNING
    assert kinds(store, job.id) == [EventKind.LOST, EventKind.LOST]
    assert store.record_progress(job.claim, {"done": 3}, T0)
    assert store.get_job(job.id).progress == {"done": 3}


def test_a_batch_with_one_lost_claim_still_records_the_others(store: JobStore) -> None:
    store.enqueue([new_job(), new_job()], T0)
    first, second = store.claim("w1", ["diag.noop"], 2, T0)
    lost = Claim(second.id, "w1", 99)
    outcomes = [
        Completed(first.claim, result=1),
        Completed(lost, result=2),
    ]
    accepted, _ = store.settle(outcomes, T0)
    assert accepted == [True, False]
    assert store.get_job(first.id).status is JobStatus.COMPLETED
    assert store.get_job(second.id).status is JobStatus.RUNNING


def test_a_batch_of_more_completions_than_one_statement_holds_lands_each_on_its_own_row(
    store: JobStore,
) -> None:
    # SQLite writes completions 64 to an UPDATE: a batch spanning three, one claim lost in the
    # middle one, each job keeping its own result and progress.
    store.enqueue([new_job() for _ in range(150)], T0)
    jobs = store.claim("w1", ["diag.noop"], 150, T0)
    lost = Claim(jobs[100].id, "w1", 99)
    outcomes = [
        Completed(lost if index == 100 else job.claim, result={"n": index}, progress={"p": index})
        for index, job in enumerate(jobs)
    ]
    accepted, _ = store.settle(outcomes, T0 + timedelta(seconds=1))
    assert accepted == [index != 100 for index in range(150)]
    for index in (0, 63, 64, 127, 128, 149):
        done = store.get_job(jobs[index].id)
        assert done.status is JobStatus.COMPLETED
        assert (done.result, done.progress) == ({"n": index}, {"p": index})
        assert done.finished_at == T0 + timedelta(seconds=1)
    assert store.get_job(jobs[100].id).status is JobStatus.RUNNING


def test_cancel_pending_is_immediate(store: JobStore) -> None:
    [result] = store.enqueue([new_job()], T0)
    job = store.request_cancel(result.job_id, T0)
    assert job.status is JobStatus.CANCELLED and job.finished_at == T0
    assert kinds(store, job.id) == [EventKind.CANCELLED]
    assert store.claim("w1", ["diag.noop"], 1, T0) == []


def test_cancel_running_sets_a_request_the_owner_sees(store: JobStore) -> None:
    job = claimed_job(store)
    requested = store.request_cancel(job.id, T0)
    assert requested.status is JobStatus.RUNNING
    assert requested.cancel_requested_at == T0
    assert store.cancel_requests("w1") == [job.claim]
    assert store.cancel_requests("w2") == []
    store.settle([Cancelled(job.claim, result_dropped=True)], T0)
    done = store.get_job(job.id)
    assert done.status is JobStatus.CANCELLED and done.result is None
    assert kinds(store, job.id) == [EventKind.CANCEL_REQUESTED, EventKind.CANCELLED]


def test_cancel_of_a_finished_or_unknown_job_is_refused(store: JobStore) -> None:
    job = claimed_job(store)
    store.settle([Completed(job.claim)], T0)
    with pytest.raises(InvalidTransitionError, match="already completed"):
        store.request_cancel(job.id, T0)
    with pytest.raises(JobNotFoundError):
        store.request_cancel(424242, T0)


def test_shutdown_interruption_cancels_or_requeues_without_spending_the_attempt(
    store: JobStore,
) -> None:
    store.enqueue([new_job(), new_job()], T0)
    first, second = store.claim("w1", ["diag.noop"], 2, T0)
    store.settle(
        [
            Interrupted(first.claim, requeue=False),
            Interrupted(second.claim, requeue=True),
        ],
        T0,
    )
    assert store.get_job(first.id).status is JobStatus.CANCELLED
    requeued = store.get_job(second.id)
    assert requeued.status is JobStatus.PENDING and requeued.attempts == 0
    assert requeued.locked_by is None
    assert kinds(store, second.id) == [EventKind.RELEASED]


def test_heartbeat_refreshes_and_reports_claims(store: JobStore) -> None:
    job = claimed_job(store)
    store.register_worker(
        WorkerInfo("w1", "host", 1, 2, ["diag.noop"], started_at=T0, last_seen_at=T0)
    )
    store.request_cancel(job.id, T0)
    held = store.heartbeat("w1", [job.claim], T0 + timedelta(seconds=5))
    assert held == [(job.claim, True)]
    assert store.get_job(job.id).heartbeat_at == T0 + timedelta(seconds=5)
    [worker] = store.list_workers()
    assert worker.last_seen_at == T0 + timedelta(seconds=5)
    assert store.heartbeat("w2", [job.claim], T0) == []
    assert store.heartbeat("w1", [Claim(job.id, "w1", job.attempts + 1)], T0) == []


def test_stale_jobs_are_reclaimed_and_fresh_ones_never(store: JobStore) -> None:
    store.enqueue([new_job(), new_job()], T0)
    [stale] = store.claim("silent", ["diag.noop"], 1, T0)
    [fresh] = store.claim("alive", ["diag.noop"], 1, T0)
    # "alive" heartbeats every 30 s for half an hour: its job runs long but is never taken.
    for half_minutes in range(1, 61):
        now = T0 + timedelta(seconds=30 * half_minutes)
        store.heartbeat("alive", [fresh.claim], now)
        reclaimed = store.reclaim_stale(now, 60, no_delay)
        assert fresh.id not in [job.job_id for job in reclaimed]
        if half_minutes == 1:
            assert reclaimed == []  # "silent" is only 30 s quiet
        if half_minutes == 3:
            assert [job.job_id for job in reclaimed] == [stale.id]
            assert reclaimed[0].from_worker == "silent" and not reclaimed[0].dead_lettered
    back = store.get_job(stale.id)
    assert back.status is JobStatus.PENDING
    assert store.get_job(fresh.id).status is JobStatus.RUNNING
    assert store.get_job(fresh.id).locked_by == "alive"
    events = store.job_events(stale.id)
    assert [event.kind for event in events] == [EventKind.RECLAIMED, EventKind.RETRY_SCHEDULED]
    assert events[0].worker_id == "silent" and events[0].attempt == 1
    # The silent worker comes back and tries to finish: its outcome is refused.
    accepted, _ = store.settle([Completed(stale.claim)], T0)
    assert accepted == [False]


def test_a_reclaimed_job_goes_back_to_pending(store: JobStore) -> None:
    job = claimed_job(store)
    [reclaimed] = store.reclaim_stale(T0 + timedelta(seconds=61), 60, lambda _t, _a: 5.0)
    assert reclaimed.job_id == job.id
    back = store.get_job(job.id)
    assert back.status is JobStatus.PENDING and back.failure_count == 1
    assert back.locked_by is None
    assert back.run_at == T0 + timedelta(seconds=66)
    assert back.last_error is not None and "w1" in back.last_error


def test_reclaiming_the_last_attempt_dead_letters_the_job(store: JobStore) -> None:
    job = claimed_job(store, max_attempts=1)
    [reclaimed] = store.reclaim_stale(T0 + timedelta(seconds=120), 60, no_delay)
    assert reclaimed.dead_lettered
    assert store.get_job(job.id).status is JobStatus.FAILED
    [entry] = store.list_dead_letters()
    assert entry.attempts == 1 and "stopped heartbeating" in entry.errors[0].message


def test_retry_puts_a_failed_or_cancelled_job_back_with_the_same_id(store: JobStore) -> None:
    job = claimed_job(store, max_attempts=1)
    store.settle([fail(job.claim)], T0)
    again = store.retry_job(job.id, T0 + timedelta(seconds=1))
    assert again.id == job.id and again.status is JobStatus.PENDING
    assert again.attempts == 0 and again.failure_count == 1
    assert store.list_dead_letters() == []  # the open entry was closed by the retry
    assert store.list_dead_letters(include_requeued=True)[0].requeued_at is not None
    with pytest.raises(InvalidTransitionError):
        store.retry_job(job.id, T0)


def test_dlq_requeue_resets_attempts_and_collects_only_the_new_rounds_errors(
    store: JobStore,
) -> None:
    job = claimed_job(store, max_attempts=1)
    store.settle([fail(job.claim, "first round")], T0)
    [entry] = store.list_dead_letters()
    requeued = store.requeue_dead_letter(entry.id, T0 + timedelta(seconds=1))
    assert (requeued.id, requeued.status, requeued.attempts) == (job.id, JobStatus.PENDING, 0)
    assert store.get_dead_letter(entry.id).requeued_at == T0 + timedelta(seconds=1)
    with pytest.raises(InvalidTransitionError, match="already requeued"):
        store.requeue_dead_letter(entry.id, T0)
    [again] = store.claim("w1", ["diag.noop"], 1, T0 + timedelta(seconds=2))
    assert again.attempts == 1
    store.settle([fail(again.claim, "second round")], T0 + timedelta(seconds=3))
    newest = store.list_dead_letters()[0]
    assert newest.id != entry.id
    assert [error.message for error in newest.errors] == ["second round"]
    assert EventKind.REQUEUED in kinds(store, job.id)


def test_purge_removes_dead_letter_entries_optionally_by_age(store: JobStore) -> None:
    for offset in (0, 100):
        store.enqueue([new_job(max_attempts=1)], T0)
        [job] = store.claim("w1", ["diag.noop"], 1, T0)
        store.settle([fail(job.claim)], T0 + timedelta(days=offset))
    assert store.purge_dead_letters(T0 + timedelta(days=50)) == 1
    assert len(store.list_dead_letters()) == 1
    assert store.purge_dead_letters() == 1
    assert store.list_dead_letters() == []
    with pytest.raises(JobNotFoundError):
        store.get_dead_letter(1)


def test_queue_stats_count_everything(store: JobStore) -> None:
    job = claimed_job(store, max_attempts=1)
    store.settle([fail(job.claim)], T0)
    store.enqueue([new_job(), new_job(), new_job("diag.sleep")], T0)
    store.register_worker(
        WorkerInfo("w1", "host", 1, 2, ["diag.noop"], started_at=T0, last_seen_at=T0)
    )
    stats = store.queue_stats(T0 + timedelta(seconds=30), alive_since=T0)
    assert stats.by_status == {
        "pending": 3,
        "running": 0,
        "completed": 0,
        "failed": 1,
        "cancelled": 0,
    }
    assert stats.by_type["diag.sleep"] == {"pending": 1}
    assert stats.dead_letter == 1 and stats.workers_alive == 1
    assert stats.oldest_pending_age_seconds == 30
    store.mark_worker_stopped("w1", T0)
    assert store.queue_stats(T0, alive_since=T0).workers_alive == 0


def test_a_worker_does_not_keep_alive_a_job_it_no_longer_runs(store: JobStore) -> None:
    # The worker completed job A, but the database lost that commit (a server crash under
    # asynchronous commit): the row says running, locked by the worker, which has forgotten it.
    store.enqueue([new_job(), new_job()], T0)
    orphan, current = store.claim("w1", ["diag.noop"], 2, T0)
    for minute in range(1, 6):
        store.heartbeat("w1", [current.claim], T0 + timedelta(minutes=minute))
    reclaimed = store.reclaim_stale(T0 + timedelta(minutes=5), 60, no_delay)
    assert [job.job_id for job in reclaimed] == [orphan.id]
    assert store.get_job(current.id).status is JobStatus.RUNNING
