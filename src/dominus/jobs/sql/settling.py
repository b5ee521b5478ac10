"""Recording how attempts ended. Completions, the hot path, are written in one batch; the rarer
outcomes (failure, cancel, shutdown) one by one with their events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, bindparam, case, func, literal, select, update

from dominus.db.schema import Document, job_queue
from dominus.db.types import UTCDateTime
from dominus.jobs.model import AttemptOutcome, Claim, EventKind, OutcomeKind
from dominus.jobs.sql import sqlite_driver
from dominus.jobs.sql.claiming import fenced
from dominus.jobs.sql.history import dead_letter, record_event, record_retry_scheduled
from dominus.jobs.sql.predicates import IS_RUNNING

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
    completed = [outcome for outcome in outcomes if outcome.kind is OutcomeKind.COMPLETED]
    if completed:
        accepted.update(_complete(connection, completed, now))
    for outcome in outcomes:
        if outcome.kind is OutcomeKind.FAILED:
            accepted[outcome.claim] = _fail(connection, outcome, now)
        elif outcome.kind is OutcomeKind.CANCELLED:
            accepted[outcome.claim] = _cancel(connection, outcome, now, "cancelled on request")
        elif outcome.kind is OutcomeKind.INTERRUPTED:
            accepted[outcome.claim] = _interrupt(connection, outcome, now)
    lost = [outcome.claim for outcome in outcomes if not accepted[outcome.claim]]
    for claim in lost:
        _record_lost(connection, claim, now)
    return [accepted[outcome.claim] for outcome in outcomes]


def _complete(
    connection: Connection, outcomes: Sequence[AttemptOutcome], now: datetime
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


def _fail(connection: Connection, outcome: AttemptOutcome, now: datetime) -> bool:
    claim = outcome.claim
    retry_at = outcome.retry_at or now
    exhausted = job_queue.c.attempts >= job_queue.c.max_attempts
    row = connection.execute(
        update(job_queue)
        .where(fenced(claim))
        .values(
            status=case((exhausted, "failed"), else_="pending"),
            finished_at=case((exhausted, literal(now, UTCDateTime)), else_=None),
            run_at=case((exhausted, job_queue.c.run_at), else_=literal(retry_at, UTCDateTime)),
            locked_by=case((exhausted, job_queue.c.locked_by), else_=None),
            failure_count=job_queue.c.failure_count + 1,
            last_error=outcome.error,
            progress=func.coalesce(literal(outcome.progress, Document), job_queue.c.progress),
            updated_at=now,
        )
        .returning(
            job_queue.c.status, job_queue.c.job_type, job_queue.c.payload, job_queue.c.attempts
        )
    ).one_or_none()
    if row is None:
        return False
    record_event(
        connection,
        claim.job_id,
        EventKind.FAILED,
        now,
        attempt=claim.attempt,
        worker_id=claim.worker_id,
        message=outcome.error,
        details={"traceback": outcome.traceback} if outcome.traceback else None,
    )
    if row.status == "failed":
        dead_letter(
            connection,
            job_id=claim.job_id,
            job_type=row.job_type,
            payload=row.payload,
            attempts=row.attempts,
            last_error=outcome.error,
            now=now,
            worker_id=claim.worker_id,
        )
    else:
        record_retry_scheduled(connection, claim.job_id, claim.attempt, retry_at, now)
    return True


def _cancel(connection: Connection, outcome: AttemptOutcome, now: datetime, reason: str) -> bool:
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
        message=reason if outcome.result is None else f"{reason}; the handler's result was dropped",
    )
    return True


def _interrupt(connection: Connection, outcome: AttemptOutcome, now: datetime) -> bool:
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
