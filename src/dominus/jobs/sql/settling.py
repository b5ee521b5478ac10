"""Recording how attempts ended. Completions, the hot path, are written in one batch; the rarer
outcomes (failure, cancel, shutdown) one by one with their events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, bindparam, func, literal, select, update

from dominus.db.schema import Document, job_queue
from dominus.db.types import UTCDateTime
from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Claim,
    Completed,
    EventKind,
    Failed,
    Interrupted,
)
from dominus.jobs.sql import metrics, postgres, sqlite_driver
from dominus.jobs.sql.failures import FailedAttempt, record_failed_attempt
from dominus.jobs.sql.history import record_event
from dominus.jobs.sql.predicates import IS_RUNNING, fenced

_complete_many = (
    update(job_queue)
    .where(
        job_queue.c.id == bindparam("b_id"),
        job_queue.c.locked_by == bindparam("b_worker"),
        job_queue.c.attempts == bindparam("b_attempt"),
        IS_RUNNING,
    )
    .values(
        status="completed",
        result=bindparam("b_result", type_=Document),
        progress=func.coalesce(bindparam("b_progress", type_=Document), job_queue.c.progress),
        finished_at=bindparam("b_now", type_=UTCDateTime),
        updated_at=bindparam("b_now", type_=UTCDateTime),
    )
)


def settle_outcomes(
    connection: Connection, outcomes: Sequence[AttemptOutcome], now: datetime
) -> list[bool]:
    accepted: dict[Claim, bool] = {}
    completed = [outcome for outcome in outcomes if isinstance(outcome, Completed)]
    if completed:
        accepted.update(_complete(connection, completed, now))
    for outcome in outcomes:
        match outcome:
            case Completed():
                pass  # recorded above, in one batch
            case Failed():
                accepted[outcome.claim] = _fail(connection, outcome, now)
            case Cancelled():
                accepted[outcome.claim] = _cancel(
                    connection, outcome, now, "cancelled on request", outcome.result_dropped
                )
            case Interrupted():
                accepted[outcome.claim] = _interrupt(connection, outcome, now)
    record_lost(
        connection, [outcome.claim for outcome in outcomes if not accepted[outcome.claim]], now
    )
    _count(connection, [outcome for outcome in outcomes if accepted[outcome.claim]])
    return [accepted[outcome.claim] for outcome in outcomes]


def _count(connection: Connection, recorded: Sequence[AttemptOutcome]) -> None:
    """Completions and cancellations for the metrics (failures count themselves)."""
    if not recorded:
        return
    increments = metrics.Increments().completions(recorded)
    for outcome in recorded:
        ends_cancelled = isinstance(outcome, Cancelled) or (
            isinstance(outcome, Interrupted) and not outcome.requeue
        )
        if ends_cancelled:
            increments.add(metrics.CANCELLED, outcome.job_type)
    metrics.write(connection, increments, metrics.shard_for(recorded[0].claim.worker_id))


def _complete(
    connection: Connection, outcomes: Sequence[Completed], now: datetime
) -> dict[Claim, bool]:
    if connection.dialect.name == "sqlite":
        raw = sqlite_driver.driver_connection(connection)
        updated = sqlite_driver.complete_jobs(raw, outcomes, now)
    else:
        parameters = [
            {
                "b_id": outcome.claim.job_id,
                "b_worker": outcome.claim.worker_id,
                "b_attempt": outcome.claim.attempt,
                "b_result": outcome.result,
                "b_progress": outcome.progress,
                "b_now": now,
            }
            for outcome in outcomes
        ]
        updated = connection.execute(_complete_many, parameters).rowcount
    if updated == len(outcomes):
        return {outcome.claim: True for outcome in outcomes}
    # Some claims were lost (the job was reclaimed while its worker was silent). Rare: find out
    # which completions landed by looking for the row this transaction just wrote.
    rows = connection.execute(
        select(job_queue.c.id, job_queue.c.locked_by, job_queue.c.attempts).where(
            job_queue.c.id.in_([outcome.claim.job_id for outcome in outcomes]),
            job_queue.c.status == "completed",
            job_queue.c.finished_at == literal(now, UTCDateTime),
        )
    )
    landed = {Claim(row.id, row.locked_by, row.attempts) for row in rows}
    return {outcome.claim: outcome.claim in landed for outcome in outcomes}


def _fail(connection: Connection, outcome: Failed, now: datetime) -> bool:
    attempt = FailedAttempt(
        claim=outcome.claim,
        kind=EventKind.FAILED,
        message=outcome.error or "failed",
        retry_at=outcome.retry_at or now,
        traceback=outcome.traceback,
        progress=outcome.progress,
        permanent=outcome.permanent,
    )
    return record_failed_attempt(connection, attempt, now) is not None


def _cancel(
    connection: Connection,
    outcome: Cancelled | Interrupted,
    now: datetime,
    reason: str,
    result_dropped: bool = False,
) -> bool:
    updated = connection.execute(
        update(job_queue)
        .where(fenced(outcome.claim))
        .values(
            status="cancelled",
            finished_at=now,
            updated_at=now,
            result=None,
            progress=func.coalesce(literal(outcome.progress, Document), job_queue.c.progress),
        )
    ).rowcount
    if updated != 1:
        return False
    record_event(
        connection,
        outcome.claim.job_id,
        EventKind.CANCELLED,
        now,
        attempt=outcome.claim.attempt,
        worker_id=outcome.claim.worker_id,
        message=f"{reason}; the handler's result was dropped" if result_dropped else reason,
    )
    return True


def _interrupt(connection: Connection, outcome: Interrupted, now: datetime) -> bool:
    if not outcome.requeue:
        return _cancel(connection, outcome, now, "interrupted by worker shutdown")
    # Back to pending without spending the attempt: the handler did not fail, it was stopped.
    updated = connection.execute(
        update(job_queue)
        .where(fenced(outcome.claim))
        .values(
            status="pending",
            attempts=job_queue.c.attempts - 1,
            locked_by=None,
            heartbeat_at=None,
            run_at=now,
            updated_at=now,
        )
    ).rowcount
    if updated != 1:
        return False
    if connection.dialect.name == "postgresql":
        postgres.notify_new_jobs(connection)
    record_event(
        connection,
        outcome.claim.job_id,
        EventKind.RELEASED,
        now,
        attempt=outcome.claim.attempt,
        worker_id=outcome.claim.worker_id,
        message="returned to pending at worker shutdown; the attempt was not counted",
    )
    return True


def record_lost(connection: Connection, claims: Sequence[Claim], now: datetime) -> None:
    """Say in each job's events that an attempt finished after its claim was lost."""
    for claim in claims:
        _record_lost(connection, claim, now)


def _record_lost(connection: Connection, claim: Claim, now: datetime) -> None:
    exists = connection.execute(
        select(job_queue.c.id).where(job_queue.c.id == claim.job_id)
    ).first()
    if exists is None:
        return
    record_event(
        connection,
        claim.job_id,
        EventKind.LOST,
        now,
        attempt=claim.attempt,
        worker_id=claim.worker_id,
        message=(
            f"worker {claim.worker_id} finished attempt {claim.attempt} after losing its claim; "
            "its outcome was discarded"
        ),
    )
