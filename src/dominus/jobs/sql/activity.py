"""The History page's reads (ADR 0054): per job type and interval of a window, jobs completed
(with their run time) and attempts failed. Two grouped queries over the rows that carry times;
reporting only, never on the claim or settle paths."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Connection, Integer, cast, func, literal, select

from dominus.db.types import UTCDateTime
from dominus.jobs.activity import TypeActivity, Window
from dominus.jobs.model import ATTEMPT_ERROR_EVENTS
from dominus.jobs.sql.tables import job_events, job_queue


def seconds_between(connection: Connection, start: Any, end: Any) -> ColumnElement[Any]:
    """`end - start` in seconds, for timestamps as each database stores them."""
    if connection.dialect.name == "sqlite":
        return (func.julianday(end) - func.julianday(start)) * 86400.0
    return func.extract("epoch", end - start)


def _bucket(connection: Connection, window: Window, moment: Any) -> ColumnElement[Any]:
    start = literal(window.start, UTCDateTime)
    offset = seconds_between(connection, start, moment)
    return cast(func.floor(offset / window.bucket.total_seconds()), Integer)


def activity(connection: Connection, window: Window) -> dict[str, TypeActivity]:
    """Every job type with a completion or a failed attempt in the window, by name."""
    found: dict[str, TypeActivity] = {}

    def of(job_type: str) -> TypeActivity:
        return found.setdefault(job_type, TypeActivity.empty(job_type, window.buckets))

    finished = job_queue.c.finished_at
    bucket = _bucket(connection, window, finished).label("bucket")
    run = seconds_between(connection, job_queue.c.started_at, finished)
    completed = connection.execute(
        select(job_queue.c.job_type, bucket, func.count(), func.sum(run), func.max(run))
        .where(job_queue.c.status == "completed")
        .where(finished >= window.start, finished < window.end)
        .group_by(job_queue.c.job_type, bucket)
    )
    for job_type, index, count, total, longest in completed:
        counts = of(job_type)
        counts.completed[_clamped(index, window)] += count
        counts.run_seconds_total += max(0.0, float(total or 0.0))
        if longest is not None:
            counts.run_seconds_max = max(counts.run_seconds_max or 0.0, float(longest))
    at = job_events.c.at
    bucket = _bucket(connection, window, at).label("bucket")
    failed = connection.execute(
        select(job_queue.c.job_type, bucket, func.count())
        .select_from(job_events.join(job_queue, job_queue.c.id == job_events.c.job_id))
        .where(job_events.c.kind.in_([kind.value for kind in ATTEMPT_ERROR_EVENTS]))
        .where(at >= window.start, at < window.end)
        .group_by(job_queue.c.job_type, bucket)
    )
    for job_type, index, count in failed:
        of(job_type).failed[_clamped(index, window)] += count
    return dict(sorted(found.items()))


def _clamped(index: int | None, window: Window) -> int:
    """Floating-point edges cannot push a moment inside the window out of its buckets."""
    return min(max(int(index or 0), 0), window.buckets - 1)
