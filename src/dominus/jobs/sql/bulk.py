"""The bulk actions over jobs an operator selected (by id, or by a filter first turned into
ids): retry, cancel, delete (ADR 0054). Each job ends as its one-job action leaves it (same
columns, same event, same counters), but the statements are set-based: a thousand jobs are a
handful of statements, not a thousand round trips, since on SQLite the transaction holds the
only write lock while it runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from dominus.errors import InvalidTransitionError
from dominus.jobs.model import EventKind, JobStatus
from dominus.jobs.selection import BulkAction, BulkOutcome, not_applicable
from dominus.jobs.sql import admin, metrics
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.tables import MAX_ID, dead_letter_jobs, job_events, job_queue


@dataclass(frozen=True)
class _Row:
    id: int
    job_type: str
    status: JobStatus
    dedupe_key: str | None
    attempts: int
    locked_by: str | None
    cancel_requested_at: datetime | None


def job_states(connection: Connection, ids: Sequence[int]) -> dict[int, JobStatus]:
    wanted = _valid(ids)
    if not wanted:
        return {}
    rows = connection.execute(
        select(job_queue.c.id, job_queue.c.status).where(job_queue.c.id.in_(wanted))
    )
    return {row.id: JobStatus(row.status) for row in rows}


def apply(
    backend: Backend, connection: Connection, action: BulkAction, ids: Sequence[int], now: datetime
) -> BulkOutcome:
    """`action` on each of `ids` in this transaction; a job the action does not take (its
    state changed since it was listed, or it is gone) is skipped with the reason."""
    outcome = BulkOutcome(action)
    wanted = sorted(set(ids))
    rows = _locked_rows(connection, wanted)
    taken = []
    for job_id in wanted:
        row = rows.get(job_id)
        if row is None:
            outcome.skipped[job_id] = f"no job with id {job_id}"
        elif row.status in action.applies_to:
            taken.append(row)
        elif action is BulkAction.CANCEL:
            outcome.skipped[job_id] = f"job {job_id} is already {row.status.value}"
        else:
            outcome.skipped[job_id] = not_applicable(action, job_id, row.status)
    if action is BulkAction.RETRY:
        _retry(backend, connection, taken, now, outcome)
    elif action is BulkAction.CANCEL:
        _cancel(backend, connection, taken, now, outcome)
    else:
        _delete(backend, connection, taken, outcome)
    outcome.done.sort()
    return outcome


def _valid(ids: Sequence[int]) -> list[int]:
    return sorted({job_id for job_id in ids if 0 < job_id <= MAX_ID})


def _locked_rows(connection: Connection, ids: list[int]) -> dict[int, _Row]:
    """The rows, locked until the transaction ends (PostgreSQL; SQLite's write transaction
    already excludes every other writer), so no worker claims one in between."""
    if not ids:
        return {}
    query = (
        select(
            job_queue.c.id,
            job_queue.c.job_type,
            job_queue.c.status,
            job_queue.c.dedupe_key,
            job_queue.c.attempts,
            job_queue.c.locked_by,
            job_queue.c.cancel_requested_at,
        )
        .where(job_queue.c.id.in_(_valid(ids)))
        .with_for_update()
    )
    return {
        row.id: _Row(
            row.id,
            row.job_type,
            JobStatus(row.status),
            row.dedupe_key,
            row.attempts,
            row.locked_by,
            row.cancel_requested_at,
        )
        for row in connection.execute(query)
    }


def _events(connection: Connection, events: list[dict[str, Any]]) -> None:
    if events:
        connection.execute(insert(job_events), events)


def _event(job_id: int, kind: EventKind, at: datetime, message: str, **more: Any) -> dict[str, Any]:
    return {
        "job_id": job_id,
        "kind": kind.value,
        "at": at,
        "attempt": more.get("attempt"),
        "worker_id": more.get("worker_id"),
        "message": message,
        "details": None,
    }


def _retry(
    backend: Backend, connection: Connection, rows: list[_Row], now: datetime, outcome: BulkOutcome
) -> None:
    """failed | cancelled → pending, attempts reset, open dead-letter entries closed (as
    `admin.restart_job`). A job whose dedupe key an active job holds (or an earlier job of
    this batch takes back) stays where it is."""
    keys = {row.dedupe_key for row in rows if row.dedupe_key is not None}
    held = _active_keys(connection, keys)
    ready = []
    for row in rows:
        if row.dedupe_key is not None and row.dedupe_key in held:
            outcome.skipped[row.id] = (
                f"job {row.id} cannot go back to pending: another active job holds its "
                f"dedupe key {row.dedupe_key!r}"
            )
            continue
        if row.dedupe_key is not None:
            held.add(row.dedupe_key)
        ready.append(row.id)
    if not ready:
        return
    try:
        with connection.begin_nested():
            connection.execute(
                update(job_queue).where(job_queue.c.id.in_(ready)).values(**admin.restarted(now))
            )
    except IntegrityError:
        # A key taken by a job enqueued meanwhile (PostgreSQL): one job at a time, as the
        # one-job retry does it, so only the jobs whose key is taken are left.
        _retry_one_by_one(backend, connection, ready, now, outcome)
        return
    connection.execute(
        update(dead_letter_jobs)
        .where(dead_letter_jobs.c.job_id.in_(ready), dead_letter_jobs.c.requeued_at.is_(None))
        .values(requeued_at=now)
    )
    backend.notify_new_jobs(connection, now)
    _events(
        connection,
        [_event(job_id, EventKind.RETRIED, now, "retried; attempts reset") for job_id in ready],
    )
    outcome.done.extend(ready)


def _active_keys(connection: Connection, keys: set[str]) -> set[str]:
    if not keys:
        return set()
    rows = connection.execute(
        select(job_queue.c.dedupe_key).where(
            job_queue.c.dedupe_key.in_(sorted(keys)),
            job_queue.c.status.in_([JobStatus.PENDING.value, JobStatus.RUNNING.value]),
        )
    )
    return {row.dedupe_key for row in rows}


def _retry_one_by_one(
    backend: Backend, connection: Connection, ids: list[int], now: datetime, outcome: BulkOutcome
) -> None:
    for job_id in ids:
        try:
            job = admin.get_job(connection, job_id, for_update=True)
            admin.restart_job(backend, connection, job, now, EventKind.RETRIED)
        except InvalidTransitionError as error:
            outcome.skipped[job_id] = error.message
        else:
            outcome.done.append(job_id)


def _cancel(
    backend: Backend, connection: Connection, rows: list[_Row], now: datetime, outcome: BulkOutcome
) -> None:
    """As `admin.request_cancel`: a pending job is cancelled at once (and counted), a running
    one asked to stop (its worker told), one already asked is left as it is."""
    pending = [row for row in rows if row.status is JobStatus.PENDING]
    asked = [
        row for row in rows if row.status is JobStatus.RUNNING and row.cancel_requested_at is None
    ]
    if pending:
        connection.execute(
            update(job_queue)
            .where(job_queue.c.id.in_([row.id for row in pending]))
            .values(status="cancelled", finished_at=now, updated_at=now, cancel_requested_at=now)
        )
        increments = metrics.Increments()
        for job_type, count in Counter(row.job_type for row in pending).items():
            increments.add(metrics.CANCELLED, job_type, count)
        backend.add_metrics(connection, increments, metrics.shard_for())
    if asked:
        for worker_id in sorted({row.locked_by or "" for row in asked}):
            backend.notify_cancel(connection, worker_id)
        connection.execute(
            update(job_queue)
            .where(job_queue.c.id.in_([row.id for row in asked]))
            .values(cancel_requested_at=now, updated_at=now)
        )
    _events(
        connection,
        [_event(row.id, EventKind.CANCELLED, now, "cancelled before it ran") for row in pending]
        + [
            _event(
                row.id,
                EventKind.CANCEL_REQUESTED,
                now,
                f"cancel requested; worker {row.locked_by} will abort attempt {row.attempts}",
                attempt=row.attempts,
                worker_id=row.locked_by,
            )
            for row in asked
        ],
    )
    outcome.done.extend(row.id for row in rows)


def _delete(
    backend: Backend, connection: Connection, rows: list[_Row], outcome: BulkOutcome
) -> None:
    """Their events and dead-letter entries go with them (ON DELETE CASCADE); the counters
    stay, as when finished jobs are pruned: where enqueues are counted from the rows (SQLite,
    ADR 0036), those not folded yet are folded before their rows go, and marked again after."""
    ids = [row.id for row in rows]
    if ids:
        backend.fold_enqueues(connection)
        connection.execute(delete(job_queue).where(job_queue.c.id.in_(ids)))
        backend.fold_enqueues(connection)
    outcome.done.extend(ids)
