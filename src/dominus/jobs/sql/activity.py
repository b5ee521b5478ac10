"""The History page's reads (ADR 0060): per job type and interval of a window, jobs completed
(with their run time), attempts failed and jobs dead-lettered, added up from the hourly history
(`history_fold`: the folded rows, and what is not folded yet in the hour under way). Pruning
finished jobs does not touch it; PRUNE deletes hours older than HISTORY_KEPT. Reporting only,
never on the claim or settle paths."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection

from dominus.jobs.activity import TypeActivity, Window
from dominus.jobs.metrics_model import (
    HISTORY_COMPLETED,
    HISTORY_DEAD_LETTERED,
    HISTORY_FAILED,
    HISTORY_RUN_SECONDS,
)
from dominus.jobs.sql.history_fold import HOUR, history, hour_start


def activity(connection: Connection, window: Window, now: datetime) -> dict[str, TypeActivity]:
    """Every job type with a completion or a failed attempt in an hour that begins inside the
    window (its intervals are whole hours), by name."""
    found: dict[str, TypeActivity] = {}
    start = hour_start(window.start)
    end = hour_start(window.end - HOUR) + HOUR
    for name, job_type, hour, value in history(connection, start, end, now):
        if not window.start <= hour < window.end:
            continue
        index = (hour - window.start) // window.bucket
        counts = found.setdefault(job_type, TypeActivity.empty(job_type, window.buckets))
        _add(counts, name, index, value)
    return dict(sorted(found.items()))


def _add(counts: TypeActivity, name: str, index: int, value: float) -> None:
    if name == HISTORY_COMPLETED:
        counts.completed[index] += round(value)
    elif name == HISTORY_FAILED:
        counts.failed[index] += round(value)
    elif name == HISTORY_DEAD_LETTERED:
        counts.dead_lettered += round(value)
    elif name == HISTORY_RUN_SECONDS:
        counts.run_seconds_total += value
