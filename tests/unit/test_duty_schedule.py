"""The worker's duty schedule: notified jobs' due times (ADR 0062), and cancel checks."""

from __future__ import annotations

from datetime import timedelta

from dominus.jobs.duties import MAX_NOTIFIED_DUE_TIMES, DutySchedule
from tests.support.clock import T0

POLL = timedelta(seconds=60)


def polled_schedule() -> DutySchedule:
    """A schedule whose worker claimed at T0 and found fewer jobs than slots."""
    duties = DutySchedule(
        poll_seconds=POLL.total_seconds(), heartbeat_seconds=600, cancel_check_seconds=600
    )
    duties.heartbeat_done(T0)
    duties.claimed(T0, full=False)
    return duties


def test_a_notified_job_makes_a_claim_due_when_it_falls_due_and_is_then_forgotten() -> None:
    duties = polled_schedule()
    due_at = T0 + timedelta(milliseconds=5)
    duties.expect_due_at(due_at)
    assert not duties.claim_due(T0)
    assert min(duties.due_times(running=0, can_claim=True)) == due_at
    assert duties.claim_due(due_at)
    duties.claimed(due_at, full=False)
    assert not duties.claim_due(due_at + timedelta(milliseconds=1))
    assert min(duties.due_times(running=0, can_claim=True)) == due_at + POLL


def test_a_burst_worker_does_not_wait_for_notified_jobs_as_it_does_for_its_retries() -> None:
    duties = polled_schedule()
    duties.expect_due_at(T0 + timedelta(seconds=1))
    assert duties.nothing_left_to_claim()
    duties.expect_retry_at(T0 + timedelta(seconds=1))
    assert not duties.nothing_left_to_claim()


def test_a_worker_that_cannot_claim_remembers_a_bounded_number_of_due_times() -> None:
    duties = polled_schedule()
    for n in range(MAX_NOTIFIED_DUE_TIMES + 10):
        duties.expect_due_at(T0 + timedelta(milliseconds=n + 1))
    assert len(duties._notified_due) == MAX_NOTIFIED_DUE_TIMES
    duties.claimed(T0 + timedelta(seconds=POLL.total_seconds()), full=False)
    assert duties._notified_due == []


def test_jobs_claimed_after_an_idle_tick_get_their_first_cancel_check_an_interval_later() -> None:
    interval = timedelta(seconds=0.5)
    duties = DutySchedule(
        poll_seconds=5, heartbeat_seconds=15, cancel_check_seconds=interval.total_seconds()
    )
    assert not duties.take_cancel_check(T0, running=0)  # idle: nothing to look at
    assert not duties.take_cancel_check(T0, running=1)  # claimed at T0: not at the next tick
    assert duties.take_cancel_check(T0 + interval, running=1)
    assert not duties.take_cancel_check(T0 + interval, running=1)


def test_a_cancel_check_asked_for_runs_at_the_next_tick_with_jobs_running() -> None:
    duties = DutySchedule(poll_seconds=5, heartbeat_seconds=15, cancel_check_seconds=0.5)
    assert not duties.take_cancel_check(T0, running=0)
    duties.request_cancel_check()
    assert duties.take_cancel_check(T0, running=1)
