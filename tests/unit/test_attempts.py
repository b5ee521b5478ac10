"""The attempt ledger: what a worker holds from the claim until the store has the outcome."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from pydantic import BaseModel

from dominus.jobs.abort import AbortReason
from dominus.jobs.attempts import RETURNED_AFTER_WAITING, RETURNED_AT_SHUTDOWN, Attempts
from dominus.jobs.context import JobContext
from dominus.jobs.execution import Finished, RunningJob, Start, run_handler
from dominus.jobs.model import (
    Cancelled,
    Claim,
    Completed,
    Failed,
    Interrupted,
    Returned,
)
from dominus.jobs.prefetch import StartGate
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.store import JobStore
from tests.support.jobs import attempt_of, running_job

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
RETRY_STEP = timedelta(seconds=10)


class NoPayload(BaseModel):
    pass


def quick(_payload: NoPayload, _context: JobContext) -> dict[str, bool]:
    return {"ok": True}


def broken(_payload: NoPayload, _context: JobContext) -> None:
    raise ValueError("boom")


async def quick_async(_payload: NoPayload, _context: JobContext) -> None:
    return None


def reporting(_payload: NoPayload, context: JobContext) -> None:
    context.progress(done=1)  # written at once (the first report)
    context.progress(done=2)  # throttled: goes with the outcome


REGISTRY = HandlerRegistry()
REGISTRY.register("quick", quick, NoPayload)
REGISTRY.register("broken", broken, NoPayload)
REGISTRY.register("quick_async", quick_async, NoPayload)
REGISTRY.register("reporting", reporting, NoPayload)


class Ledger:
    """An `Attempts` with what it is given by a worker, each visible to the test."""

    def __init__(self, concurrency: int = 4, *, shutdown_requeue: bool = False) -> None:
        self.gate = StartGate(concurrency)
        self.started_async: list[RunningJob] = []
        self.in_pool_inbox = 0
        self.attempts = Attempts(
            self.gate,
            start_async=self.started_async.append,
            sync_waiting=lambda: self.in_pool_inbox,
            shutdown_requeue=shutdown_requeue,
            retry_at=lambda running: T0 + RETRY_STEP * running.job.attempts,
        )


def attempt(job_id: int, job_type: str = "quick", *, claimed_at: datetime = T0) -> RunningJob:
    job = running_job(job_id, job_type, at=T0, timeout_seconds=30)
    return attempt_of(job, REGISTRY.get(job_type), claimed_at=claimed_at)


def run(running: RunningJob, at: datetime = T0) -> Finished:
    """What a pool thread does with a waiting attempt."""
    assert running.begin(at)
    return run_handler(running, lambda: at + timedelta(seconds=1))


# --- holding, finishing, collecting, settling -----------------------------------------------
def test_an_attempt_is_held_from_its_dispatch_until_its_outcome_is_settled() -> None:
    attempts = Ledger().attempts
    running = attempt(1)
    assert attempts.idle

    attempts.add(running)
    assert attempts.holds(running.claim)
    assert attempts.claims() == [running.claim]
    assert (attempts.running_count, attempts.handlers_in_flight) == (1, 1)
    assert attempts.handlers_started == 0  # claimed ahead: waiting for a handler
    assert not attempts.idle

    finished = run(running)
    assert attempts.handlers_started == 1
    attempts.hand_over(finished)
    # Returned, not yet collected: no longer in flight, still running for the loop.
    assert (attempts.running_count, attempts.handlers_in_flight) == (1, 0)

    attempts.collect_finished()
    assert attempts.running_count == 0
    assert attempts.handlers_started == 0
    [outcome] = attempts.to_settle()
    assert isinstance(outcome, Completed)
    assert (outcome.claim, outcome.result, outcome.duration_seconds) == (
        running.claim,
        {"ok": True},
        1,
    )
    assert attempts.holds(running.claim)  # the claim stays held (and heartbeated) until recorded
    assert not attempts.idle

    assert attempts.settled([outcome], [True]) == []
    assert attempts.idle
    assert not attempts.holds(running.claim)
    assert attempts.to_settle() == []


def test_a_failure_carries_its_retry_time_and_is_handed_back_once_accepted() -> None:
    attempts = Ledger().attempts
    running = attempt(1, "broken")
    attempts.add(running)
    attempts.hand_over(run(running))
    attempts.collect_finished()

    [outcome] = attempts.to_settle()
    assert isinstance(outcome, Failed)
    assert outcome.error == "ValueError: boom"
    assert outcome.retry_at == T0 + RETRY_STEP

    assert attempts.settled([outcome], [True]) == [(running.job, outcome)]
    assert attempts.idle


def test_an_outcome_the_store_refused_ends_the_attempt_all_the_same(
    caplog: pytest.LogCaptureFixture,
) -> None:
    attempts = Ledger().attempts
    failing, quick_one = attempt(1, "broken"), attempt(2)
    for running in (failing, quick_one):
        attempts.add(running)
        attempts.hand_over(run(running))
    attempts.collect_finished()
    outcomes = attempts.to_settle()

    with caplog.at_level(logging.WARNING, logger="dominus.worker"):
        failures = attempts.settled(outcomes, [False, False])

    assert failures == []  # a refused failure schedules nothing and dead-letters nothing
    assert attempts.idle
    assert caplog.text.count("finished after its claim was lost; outcome dropped") == 2


def test_outcomes_stay_to_settle_until_a_settle_records_them() -> None:
    attempts = Ledger().attempts
    running = attempt(1)
    attempts.add(running)
    attempts.hand_over(run(running))
    attempts.collect_finished()

    first_try = attempts.to_settle()  # the store raised: nothing reported settled
    assert attempts.to_settle() == first_try
    assert attempts.holds(running.claim)
    assert not attempts.idle


def test_a_job_completed_in_its_handlers_transaction_has_nothing_left_to_settle() -> None:
    attempts = Ledger().attempts
    running = attempt(1)
    attempts.add(running)
    assert running.begin(T0)
    attempts.hand_over(Finished(running, finished_at=T0, recorded=True))

    attempts.collect_finished()

    assert attempts.to_settle() == []
    assert attempts.idle


# --- taking back what has not started --------------------------------------------------------
def test_a_cancel_takes_back_a_job_not_started_and_records_it_cancelled() -> None:
    attempts = Ledger().attempts
    running = attempt(1)
    attempts.add(running)

    attempts.cancel(running.claim)

    assert running.abort.reason is AbortReason.CANCELLED
    assert running.start is Start.WITHHELD
    assert not running.begin(T0)  # the pool thread that reaches it later does not run it
    assert attempts.running_count == 0
    assert attempts.to_settle() == [Cancelled(running.claim, job_type="quick")]


def test_a_cancel_of_a_started_job_only_aborts_its_handler() -> None:
    attempts = Ledger().attempts
    running = attempt(1)
    attempts.add(running)
    assert running.begin(T0)

    attempts.cancel(running.claim)

    assert running.abort.reason is AbortReason.CANCELLED
    assert attempts.running_count == 1
    assert attempts.to_settle() == []  # its handler's end says how it ended


def test_at_shutdown_jobs_not_started_go_back_to_pending_and_started_ones_stay() -> None:
    attempts = Ledger().attempts
    started, waiting = attempt(1), attempt(2)
    attempts.add(started)
    attempts.add(waiting)
    assert started.begin(T0)

    attempts.return_waiting()

    assert attempts.to_settle() == [
        Returned(waiting.claim, why=RETURNED_AT_SHUTDOWN, job_type="quick")
    ]
    assert attempts.running_count == 1
    assert attempts.handlers_started == 1


def test_a_job_claimed_ahead_goes_back_once_it_has_waited_too_long() -> None:
    ledger = Ledger()
    attempts = ledger.attempts
    waiting = attempt(1, claimed_at=T0)
    attempts.add(waiting)
    ledger.in_pool_inbox = 1
    assert attempts.jobs_waiting

    attempts.return_waiting_too_long(T0 + timedelta(seconds=0.9), max_wait_seconds=1)
    assert attempts.to_settle() == []

    attempts.return_waiting_too_long(T0 + timedelta(seconds=1), max_wait_seconds=1)
    assert attempts.to_settle() == [
        Returned(waiting.claim, why=RETURNED_AFTER_WAITING, job_type="quick")
    ]
    assert attempts.running_count == 0


def test_nothing_is_returned_for_waiting_too_long_while_no_job_waits() -> None:
    attempts = Ledger().attempts
    running = attempt(1, claimed_at=T0)
    attempts.add(running)
    assert not attempts.jobs_waiting  # e.g. a pool thread has taken it and waits at the gate

    attempts.return_waiting_too_long(T0 + timedelta(hours=1), max_wait_seconds=1)

    assert attempts.to_settle() == []
    assert attempts.running_count == 1


def test_a_lost_claim_aborts_a_started_handler_and_drops_a_job_not_started() -> None:
    attempts = Ledger().attempts
    started, waiting, cancelled, kept = attempt(1), attempt(2), attempt(3), attempt(4)
    for running in (started, waiting, cancelled, kept):
        attempts.add(running)
    assert started.begin(T0)

    attempts.heartbeat_answered({cancelled.claim: True, kept.claim: False})

    assert started.abort.reason is AbortReason.LOST
    assert attempts.holds(started.claim)  # its handler's end is still to come
    assert waiting.abort.reason is AbortReason.LOST
    assert not attempts.holds(waiting.claim)  # never started: nothing to record
    assert cancelled.abort.reason is AbortReason.CANCELLED
    assert attempts.to_settle() == [Cancelled(cancelled.claim, job_type="quick")]
    assert not kept.abort.is_set()
    assert attempts.running_count == 2  # started and kept


def test_a_waiting_job_whose_claim_is_lost_is_withheld_before_a_running_one_frees_its_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An aborted handler frees its slot at once, and a pool thread may start the next job
    waiting for it straight away: a waiting job whose claim is lost too must already be
    withheld by then."""
    attempts = Ledger(concurrency=1).attempts
    started, waiting = attempt(1), attempt(2)
    attempts.add(started)
    attempts.add(waiting)
    assert started.begin(T0)
    abort_started = started.abort.set
    began: list[bool] = []

    def abort_then_the_slot_is_taken(reason: AbortReason) -> bool:
        changed = abort_started(reason)
        began.append(waiting.begin(T0))  # the freed slot's next job tries to start
        return changed

    monkeypatch.setattr(started.abort, "set", abort_then_the_slot_is_taken)
    attempts.heartbeat_answered({})

    assert began == [False]
    assert waiting.start is not Start.STARTED and not attempts.holds(waiting.claim)
    assert started.abort.reason is AbortReason.LOST


# --- giving up at shutdown ---------------------------------------------------------------------
@pytest.mark.parametrize("requeue", [False, True])
def test_handlers_that_ignore_their_abort_are_given_up_on_and_recorded_interrupted(
    requeue: bool,
) -> None:
    attempts = Ledger(shutdown_requeue=requeue).attempts
    running = attempt(1)
    attempts.add(running)
    assert running.begin(T0)
    running.progress_reporter().report({"done": 3})  # written at once (the first report)
    running.progress_reporter().report({"done": 4})  # throttled: goes with the outcome

    attempts.give_up(abort_grace_seconds=5)

    assert attempts.to_settle() == [
        Interrupted(running.claim, requeue=requeue, progress={"done": 4}, job_type="quick")
    ]
    assert (attempts.running_count, attempts.handlers_in_flight) == (0, 0)

    # The handler returns at last: its result is not recorded a second time.
    attempts.hand_over(run_handler(running, lambda: T0))
    assert attempts.handlers_in_flight == 0
    attempts.collect_finished()
    assert len(attempts.to_settle()) == 1


def test_a_handler_that_completed_in_its_transaction_is_not_recorded_interrupted() -> None:
    attempts = Ledger().attempts
    running = attempt(1)
    # Only `completed` is read here; the store is never reached.
    running.services = replace(running.services, store=cast(JobStore, object()))
    transactions = running.handler_transactions()
    assert transactions is not None
    transactions.completed = True
    attempts.add(running)
    assert running.begin(T0)

    attempts.give_up(abort_grace_seconds=5)

    assert attempts.to_settle() == []
    assert attempts.idle


# --- what the handler's context makes on first use -------------------------------------------
def test_progress_reported_through_the_context_goes_with_the_outcome() -> None:
    attempts = Ledger().attempts
    written: list[dict[str, Any]] = []

    def sink(_claim: Claim, progress: dict[str, Any], _now: datetime) -> bool:
        written.append(progress)
        return True

    running = attempt(1, "reporting")
    running.services = replace(running.services, progress_sink=sink)
    attempts.add(running)

    attempts.hand_over(run(running))
    attempts.collect_finished()

    assert written == [{"done": 1}]
    [outcome] = attempts.to_settle()
    assert isinstance(outcome, Completed) and outcome.progress == {"done": 2}


def test_a_handler_that_reports_nothing_leaves_no_progress_to_write() -> None:
    attempts = Ledger().attempts
    running = attempt(1)
    attempts.add(running)

    attempts.hand_over(run(running))
    attempts.collect_finished()

    [outcome] = attempts.to_settle()
    assert outcome.progress is None and not running.completed_in_transaction


def test_a_progress_write_that_finds_the_claim_gone_aborts_the_attempt() -> None:
    running = attempt(1)
    running.services = replace(running.services, progress_sink=lambda *_: False)

    running.progress_reporter().report({"done": 1})

    assert running.abort.reason is AbortReason.LOST


def test_an_attempt_makes_one_reporter_and_one_set_of_transactions() -> None:
    running = attempt(1)
    running.services = replace(running.services, store=cast(JobStore, object()))

    assert running.progress_reporter() is running.progress_reporter()
    transactions = running.handler_transactions()
    assert transactions is not None and transactions is running.handler_transactions()


# --- aborts and timeouts -------------------------------------------------------------------
def test_a_handler_past_its_timeout_is_aborted_once() -> None:
    attempts = Ledger().attempts
    running = attempt(1)  # timeout 30 s
    attempts.add(running)
    assert running.begin(T0)
    assert list(attempts.deadlines()) == [T0 + timedelta(seconds=30)]
    assert attempts.longest_run_seconds(T0 + timedelta(seconds=12)) == 12

    attempts.abort_overdue(T0 + timedelta(seconds=29))
    assert not running.abort.is_set()
    attempts.abort_overdue(T0 + timedelta(seconds=30))
    assert running.abort.reason is AbortReason.TIMEOUT
    assert list(attempts.deadlines()) == []  # enforced: the loop need not wake for it again


def test_the_abort_at_shutdown_reaches_unfinished_handlers_only() -> None:
    attempts = Ledger().attempts
    finished, unfinished = attempt(1), attempt(2)
    for running in (finished, unfinished):
        attempts.add(running)
    attempts.hand_over(run(finished))
    attempts.collect_finished()

    attempts.abort_unfinished(AbortReason.SHUTDOWN)

    assert not finished.abort.is_set()
    assert unfinished.abort.reason is AbortReason.SHUTDOWN
    attempts.abort_all(AbortReason.LOST)
    assert finished.abort.reason is AbortReason.LOST


# --- async jobs waiting for the gate ---------------------------------------------------------
def test_async_jobs_wait_here_until_the_gate_lets_them_start() -> None:
    ledger = Ledger(concurrency=1)
    attempts = ledger.attempts
    first, second, third = (attempt(n, "quick_async") for n in (1, 2, 3))
    for running in (first, second, third):
        attempts.add(running)
    assert (attempts.async_waiting, attempts.jobs_waiting) == (3, True)

    attempts.start_waiting_async()
    assert ledger.started_async == [first]
    assert attempts.async_waiting == 2

    attempts.cancel(second.claim)  # taken back while it waits: never started
    ledger.gate.leave()  # the first handler ended
    attempts.start_waiting_async()

    assert ledger.started_async == [first, third]
    assert (attempts.async_waiting, attempts.jobs_waiting) == (0, False)
    assert attempts.running_count == 2


def test_a_sync_job_is_not_kept_waiting_here() -> None:
    ledger = Ledger()
    ledger.attempts.add(attempt(1))
    ledger.attempts.start_waiting_async()
    assert ledger.started_async == []
    assert ledger.attempts.async_waiting == 0
