"""Store contract: a settle or claim that committed on the server while its worker saw an error.

The worker settles the same outcomes again at its next tick; its claims of that transaction are
running rows it does not know it holds. Neither may look like a lost claim or a crash."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from dominus.jobs import EventKind, JobStatus, JobStore
from dominus.jobs.model import AttemptOutcome, Cancelled, Claim, Completed, Interrupted
from tests.support.clock import T0
from tests.support.jobs import claimed_job, fail, kinds, new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


OUTCOMES: dict[str, Callable[[Claim], AttemptOutcome]] = {
    "completed": lambda claim: Completed(claim, result={"n": 1}),
    "failed": fail,
    "cancelled": lambda claim: Cancelled(claim, job_type="diag.noop"),
    "interrupted": lambda claim: Interrupted(claim, requeue=False, job_type="diag.noop"),
    "released": lambda claim: Interrupted(claim, requeue=True, job_type="diag.noop"),
}


@pytest.mark.parametrize("kind", OUTCOMES)
def test_settling_an_outcome_again_finds_it_landed_and_changes_nothing(
    store: JobStore, kind: str
) -> None:
    job = claimed_job(store)
    outcome: AttemptOutcome = OUTCOMES[kind](job.claim)
    assert store.settle([outcome], T0)[0] == [True]
    after_once = store.get_job(job.id)
    events_once = kinds(store, job.id)

    # The worker saw an error for the first settle and sends the same outcome again.
    assert store.settle([outcome], T0 + timedelta(seconds=1))[0] == [True]

    assert store.get_job(job.id) == after_once
    assert kinds(store, job.id) == events_once
    assert EventKind.LOST not in events_once


def test_a_batch_of_completions_sent_again_lands_once(store: JobStore) -> None:
    store.enqueue([new_job(), new_job()], T0)
    first, second = store.claim("w1", ["diag.noop"], 2, T0)
    store.settle([Completed(first.claim, result=1, job_type="diag.noop")], T0)
    both = [
        Completed(first.claim, result=1, job_type="diag.noop"),
        Completed(second.claim, result=2, job_type="diag.noop"),
    ]
    assert store.settle(both, T0 + timedelta(seconds=1))[0] == [True, True]
    assert store.get_job(second.id).status is JobStatus.COMPLETED
    assert kinds(store, first.id) == kinds(store, second.id) == []
    assert store.metric_totals().counter("completed", "diag.noop") == 2


def test_an_outcome_of_another_claim_is_still_lost(store: JobStore) -> None:
    job = claimed_job(store)
    store.settle([Completed(job.claim, result=1)], T0)
    for other in (Claim(job.id, "w2", job.attempts), Claim(job.id, "w1", job.attempts + 1)):
        assert store.settle([Completed(other, result=2)], T0)[0] == [False]
    assert store.get_job(job.id).result == 1
    assert kinds(store, job.id) == [EventKind.LOST, EventKind.LOST]


def test_a_late_failure_after_a_reclaim_is_lost_not_landed(store: JobStore) -> None:
    job = claimed_job(store)
    store.reclaim_stale(T0 + timedelta(hours=1), 60, lambda _type, _attempt: 0.0)
    assert store.settle([fail(job.claim)], T0 + timedelta(hours=1))[0] == [False]
    assert kinds(store, job.id)[-1] is EventKind.LOST


def test_claims_a_worker_never_saw_go_back_to_pending_with_the_attempt_unspent(
    store: JobStore,
) -> None:
    store.enqueue([new_job() for _ in range(3)], T0)
    seen, *unseen = store.claim("w1", ["diag.noop"], 3, T0)
    [other] = store.enqueue([new_job()], T0)
    [theirs] = store.claim("w2", ["diag.noop"], 1, T0)

    released = store.release_unseen_claims("w1", [seen.claim], T0 + timedelta(seconds=1))

    assert sorted(released) == sorted(job.id for job in unseen)
    for job in unseen:
        back = store.get_job(job.id)
        assert (back.status, back.attempts, back.locked_by) == (JobStatus.PENDING, 0, None)
        assert kinds(store, job.id) == [EventKind.RELEASED]
    assert store.get_job(seen.id).status is JobStatus.RUNNING
    assert store.get_job(theirs.id).locked_by == "w2" and other.job_id == theirs.id
    assert store.release_unseen_claims("w1", [seen.claim], T0) == []


def test_an_older_rounds_trace_does_not_vouch_for_the_same_claim_held_again(
    store: JobStore,
) -> None:
    """A release does not spend the attempt, so the same worker can claim the same attempt
    again (found by the store's state-machine test). If that second hold is reclaimed, the
    worker's late release of it is lost: the first round's `released` event is not its trace."""
    job = claimed_job(store)
    release = Interrupted(job.claim, requeue=True, job_type="diag.noop")
    assert store.settle([release], T0)[0] == [True]
    [again] = store.claim("w1", ["diag.noop"], 1, T0)
    assert again.claim == job.claim
    store.reclaim_stale(T0 + timedelta(hours=1), 60, lambda _type, _attempt: 0.0)
    assert store.settle([release], T0 + timedelta(hours=1))[0] == [False]
    assert kinds(store, job.id)[-1] is EventKind.LOST
