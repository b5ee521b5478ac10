"""Recording how attempts ended. Completions, the hot path, are written in one batch; the rarer
outcomes (failure, cancel, shutdown) one by one with their events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, func, literal, select, update

from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Claim,
    Completed,
    EventKind,
    Failed,
    Interrupted,
    Returned,
    Snoozed,
)
from dominus.jobs.sql import metrics
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.failures import FailedAttempt, record_failed_attempt
from dominus.jobs.sql.history import record_event
from dominus.jobs.sql.predicates import fenced
from dominus.jobs.sql.tables import SNOOZED_FOR_KEY, Document, job_events, job_queue


def settle_outcomes(
    backend: Backend, connection: Connection, outcomes: Sequence[AttemptOutcome], now: datetime
) -> list[bool]:
    accepted: dict[Claim, bool] = {}
    completed = [outcome for outcome in outcomes if isinstance(outcome, Completed)]
    if completed:
        # The backend's batch completion counts the completions that landed (one statement on
        # PostgreSQL).
        landed = backend.complete(connection, completed, now)
        accepted.update(zip((outcome.claim for outcome in completed), landed, strict=True))
    for outcome in outcomes:
        match outcome:
            case Completed():
                pass  # recorded above, in one batch
            case Failed():
                accepted[outcome.claim] = _fail(backend, connection, outcome, now)
            case Cancelled():
                accepted[outcome.claim] = _cancel(
                    connection, outcome, now, "cancelled on request", outcome.result_dropped
                )
            case Interrupted():
                accepted[outcome.claim] = _interrupt(backend, connection, outcome, now)
            case Returned():
                accepted[outcome.claim] = release_claim(
                    backend, connection, outcome.claim, now, outcome.why
                )
            case Snoozed():
                accepted[outcome.claim] = _snooze(connection, outcome, now)
    unlanded = [outcome for outcome in outcomes if not accepted[outcome.claim]]
    accepted.update(dict.fromkeys(settle_unlanded(connection, unlanded, now), True))
    _count_cancellations(
        backend, connection, [outcome for outcome in outcomes if accepted[outcome.claim]]
    )
    return [accepted[outcome.claim] for outcome in outcomes]


def _count_cancellations(
    backend: Backend, connection: Connection, recorded: Sequence[AttemptOutcome]
) -> None:
    """Cancellations for the metrics (completions and failures count themselves)."""
    increments = metrics.Increments()
    for outcome in recorded:
        ends_cancelled = isinstance(outcome, Cancelled) or (
            isinstance(outcome, Interrupted) and not outcome.requeue
        )
        if ends_cancelled:
            increments.add(metrics.CANCELLED, outcome.job_type)
    if increments:
        backend.add_metrics(connection, increments, metrics.shard_for(recorded[0].claim.worker_id))


def _fail(backend: Backend, connection: Connection, outcome: Failed, now: datetime) -> bool:
    attempt = FailedAttempt(
        claim=outcome.claim,
        kind=EventKind.FAILED,
        message=outcome.error or "failed",
        # None: due at once, as `Failed` documents for the store's callers. The worker never
        # leaves it out: it always gives the time its retry policy says (`RetryPolicies`).
        retry_at=now if outcome.retry_at is None else outcome.retry_at,
        traceback=outcome.traceback,
        progress=outcome.progress,
        permanent=outcome.permanent,
        pickup_seconds=outcome.pickup_seconds,
    )
    return record_failed_attempt(backend, connection, attempt, now) is not None


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


def _interrupt(
    backend: Backend, connection: Connection, outcome: Interrupted, now: datetime
) -> bool:
    if not outcome.requeue:
        return _cancel(connection, outcome, now, "interrupted by worker shutdown")
    # The handler did not fail, it was stopped.
    return release_claim(
        backend, connection, outcome.claim, now, "returned to pending at worker shutdown"
    )


def release_claim(
    backend: Backend, connection: Connection, claim: Claim, now: datetime, why: str
) -> bool:
    """Back to pending without spending the attempt (fenced on the claim)."""
    updated = connection.execute(
        update(job_queue)
        .where(fenced(claim))
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
    backend.notify_new_jobs(connection, now)
    record_event(
        connection,
        claim.job_id,
        EventKind.RELEASED,
        now,
        attempt=claim.attempt,
        worker_id=claim.worker_id,
        message=f"{why}; the attempt was not counted",
    )
    return True


def _snooze(connection: Connection, outcome: Snoozed, now: datetime) -> bool:
    """Back to pending, due at the snooze's end, the attempt not spent and no error recorded;
    fenced on the claim like a completion (ADR 0024, 0050). No wake-up: the job is not due yet,
    and the worker that snoozed it looks again when it is."""
    updated = connection.execute(
        update(job_queue)
        .where(fenced(outcome.claim))
        .values(
            status="pending",
            attempts=job_queue.c.attempts - 1,
            locked_by=None,
            heartbeat_at=None,
            run_at=outcome.run_at,
            updated_at=now,
            progress=func.coalesce(literal(outcome.progress, Document), job_queue.c.progress),
        )
    ).rowcount
    if updated != 1:
        return False
    record_event(
        connection,
        outcome.claim.job_id,
        EventKind.SNOOZED,
        now,
        attempt=outcome.claim.attempt,
        worker_id=outcome.claim.worker_id,
        message=f"snoozed for {outcome.seconds:g} s by its handler; the attempt was not counted",
        details=_snooze_details(outcome),
    )
    return True


def _snooze_details(outcome: Snoozed) -> dict[str, str]:
    details = {"run_at": outcome.run_at.isoformat()}
    if outcome.rate_key is not None:
        details[SNOOZED_FOR_KEY] = outcome.rate_key
    return details


def settle_unlanded(
    connection: Connection, outcomes: Sequence[AttemptOutcome], now: datetime
) -> list[Claim]:
    """For outcomes whose fenced write matched no row: the ones this very claim had already
    recorded are returned (they landed); the others are lost, and each job's events say so.

    An outcome lands twice over when a settle committed on the server but its worker saw an
    error (the connection cut after COMMIT) and settled the same outcomes again at its next
    tick: the claim no longer holds because its own earlier write ended it."""
    earlier = _landed_earlier(connection, outcomes)
    for outcome in outcomes:
        if outcome.claim not in earlier:
            _record_lost(connection, outcome.claim, now)
    return [outcome.claim for outcome in outcomes if outcome.claim in earlier]


def _landed_earlier(connection: Connection, outcomes: Sequence[AttemptOutcome]) -> set[Claim]:
    if not outcomes:
        return set()
    job_ids = [outcome.claim.job_id for outcome in outcomes]
    # A completion or a cancel leaves its claim's worker and attempt on the row; a failure or a
    # release leaves an event naming them, and it must be the job's latest: the same worker can
    # hold the same (job, attempt) again after a release or a retry, and an older round's event
    # must not vouch for this one.
    ended = connection.execute(
        select(job_queue.c.id, job_queue.c.locked_by, job_queue.c.attempts, job_queue.c.status)
        .where(job_queue.c.id.in_(job_ids))
        .where(job_queue.c.status.in_(["completed", "cancelled"]))
    )
    found = {(Claim(row.id, row.locked_by, row.attempts), row.status) for row in ended}
    events = connection.execute(
        select(job_events.c.job_id, job_events.c.worker_id, job_events.c.attempt, job_events.c.kind)
        .where(job_events.c.job_id.in_(job_ids))
        .where(job_events.c.kind.not_in(_WRITTEN_WITH_A_FAILURE))
        .order_by(job_events.c.id)
    )
    latest = {row.job_id: row for row in events}
    found.update(
        (Claim(row.job_id, row.worker_id, row.attempt), row.kind) for row in latest.values()
    )
    return {outcome.claim for outcome in outcomes if (outcome.claim, _trace(outcome)) in found}


# Events that recording a failure writes after its `failed` event.
_WRITTEN_WITH_A_FAILURE = [EventKind.RETRY_SCHEDULED.value, EventKind.DEAD_LETTERED.value]


def _trace(outcome: AttemptOutcome) -> str:
    """What recording `outcome` leaves behind: the row's status or the event's kind."""
    match outcome:
        case Completed():
            return "completed"
        case Cancelled():
            return "cancelled"
        case Interrupted(requeue=True) | Returned():
            return EventKind.RELEASED.value
        case Snoozed():
            return EventKind.SNOOZED.value
        case Interrupted():
            return "cancelled"
        case Failed():
            return EventKind.FAILED.value


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
