"""The History page's reads (ADR 0060): per job type and interval of a window, jobs completed
(with their run time), attempts failed and jobs dead-lettered, added up from the hourly history
rows of `job_metrics` that the completion and failure statements write beside the counters.
Pruning finished jobs does not touch them; PRUNE deletes hours older than HISTORY_KEPT.
Reporting only, never on the claim or settle paths."""

from __future__ import annotations

from sqlalchemy import Connection

from dominus.jobs.activity import TypeActivity, Window
from dominus.jobs.metrics_model import (
    HISTORY_COMPLETED,
    HISTORY_DEAD_LETTERED,
    HISTORY_FAILED,
    HISTORY_NAMES,
    HISTORY_RUN_SECONDS,
    history_hour,
    hour_of,
)
from dominus.jobs.sql.metrics import summed
from dominus.jobs.sql.tables import job_metrics


def activity(connection: Connection, window: Window) -> dict[str, TypeActivity]:
    """Every job type with a completion or a failed attempt in an hour that begins inside the
    window (its intervals are whole hours), by name."""
    found: dict[str, TypeActivity] = {}
    rows = connection.execute(
        summed(
            job_metrics.c.name.in_(HISTORY_NAMES),
            job_metrics.c.bucket >= history_hour(window.start),
            job_metrics.c.bucket <= history_hour(window.end),
        )
    )
    for name, job_type, bucket, total in rows:
        start = hour_of(bucket)
        if not window.start <= start < window.end:
            continue
        index = (start - window.start) // window.bucket
        counts = found.setdefault(job_type, TypeActivity.empty(job_type, window.buckets))
        _add(counts, name, index, float(total))
    return dict(sorted(found.items()))


def _add(counts: TypeActivity, name: str, index: int, total: float) -> None:
    if name == HISTORY_COMPLETED:
        counts.completed[index] += round(total)
    elif name == HISTORY_FAILED:
        counts.failed[index] += round(total)
    elif name == HISTORY_DEAD_LETTERED:
        counts.dead_lettered += round(total)
    elif name == HISTORY_RUN_SECONDS:
        counts.run_seconds_total += total
