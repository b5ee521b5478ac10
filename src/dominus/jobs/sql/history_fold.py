"""The hourly job history (ADR 0060), folded from the `job_metrics` counters off the hot path.

The completion and failure statements add to the counters only, as before. A fold (the
worker's maintenance, at most once a minute per process) takes what each counter gained since
the last fold and adds it to that counter's history row of the current UTC hour, and moves the
counter's mark (a `history_folded` row: the total at the last fold) up to the total, in one
transaction, so nothing is counted twice or lost: a completion is in the history exactly when
its counter is above the mark. A reading adds what is not folded yet to the hour under way,
so the history is exact at every moment; what the fold adds is dated to the minute.

    source counter                history row
    completed                     history_completed
    duration_sum                  history_run_seconds
    failed, reclaimed             history_failed
    dead_lettered                 history_dead_lettered

**The first fold** (no begin mark yet: a new database, or one from before the history; none
while no counter has moved, so an empty database keeps no rows, as `db copy` expects) takes
the history of the last HISTORY_KEPT from the job rows still kept (a completed job's
`finished_at` and run time, each failed, reclaimed and dead-lettered event), and marks every
counter at its total: the rows and the counters are read in the same transaction, so what the
rows show is what the marks take in. Until then a reading takes the rows too.

PRUNE makes that first fold before it deletes a job, if no worker has.

**One fold at a time.** On SQLite the write transaction (BEGIN IMMEDIATE) keeps every other
writer out. On PostgreSQL the fold first locks `job_metrics` in EXCLUSIVE mode: it waits for
the transactions that are adding to counters, and the ones that come after wait for it (a few
milliseconds, once a minute), so the totals, the rows and the marks it reads are one moment's
and a concurrent fold reads its marks after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Connection, Integer, cast, func, literal, select

from dominus.db.types import UTCDateTime
from dominus.jobs.metrics_model import (
    COMPLETED,
    DEAD_LETTERED,
    DURATION_SUM,
    FAILED,
    HISTORY_COMPLETED,
    HISTORY_DEAD_LETTERED,
    HISTORY_FAILED,
    HISTORY_FOLDED,
    HISTORY_KEPT,
    HISTORY_NAMES,
    HISTORY_RUN_SECONDS,
    RECLAIMED,
    history_hour,
    hour_of,
)
from dominus.jobs.model import ATTEMPT_ERROR_EVENTS, EventKind
from dominus.jobs.sql.backend import Backend
from dominus.jobs.sql.metrics import Increments, summed
from dominus.jobs.sql.tables import job_events, job_metrics, job_queue

HOUR = timedelta(hours=1)
# Which history row each counter's gains go to.
SOURCES: Mapping[str, str] = {
    COMPLETED: HISTORY_COMPLETED,
    DURATION_SUM: HISTORY_RUN_SECONDS,
    FAILED: HISTORY_FAILED,
    RECLAIMED: HISTORY_FAILED,
    DEAD_LETTERED: HISTORY_DEAD_LETTERED,
}
FOLD_SHARD = 0  # one writer at a time: no need to spread the rows
_BEGUN = (HISTORY_FOLDED, "", "")

Key = tuple[str, str]  # (counter name, job type)
Entry = tuple[str, str, datetime, float]  # (history name, job type, hour, value)


def hour_start(moment: datetime) -> datetime:
    return hour_of(history_hour(moment))


# --- what is not folded yet -------------------------------------------------------------------
def _counters(connection: Connection) -> tuple[dict[Key, float], dict[Key, float], bool]:
    """The source counters' totals, their marks, and whether the history has begun."""
    names = [*SOURCES, HISTORY_FOLDED]
    totals: dict[Key, float] = {}
    marks: dict[Key, float] = {}
    begun = False
    for name, job_type, bucket, total in connection.execute(summed(job_metrics.c.name.in_(names))):
        if (name, job_type, bucket) == _BEGUN:
            begun = True
        elif name == HISTORY_FOLDED:
            marks[(bucket, job_type)] = float(total)
        else:
            totals[(name, job_type)] = float(total)
    return totals, marks, begun


def _gains(totals: Mapping[Key, float], marks: Mapping[Key, float]) -> dict[Key, float]:
    """What each counter moved since its mark (a counter that fell, as `db copy` can leave
    one, moves its mark down and adds nothing)."""
    moved = {key: totals.get(key, 0.0) - marks.get(key, 0.0) for key in {*totals, *marks}}
    return {key: value for key, value in moved.items() if value != 0.0}


def unfolded(connection: Connection) -> list[tuple[str, str, float]] | None:
    """(history name, job type, value) gained since the last fold; None before the first."""
    totals, marks, begun = _counters(connection)
    if not begun:
        return None
    gains = _gains(totals, marks)
    return [(SOURCES[name], job_type, gain) for (name, job_type), gain in gains.items() if gain > 0]


# --- the fold ---------------------------------------------------------------------------------
def fold(backend: Backend, connection: Connection, now: datetime) -> int:
    """Fold what the counters gained into the hour of `now`; the first fold takes the job
    rows' history. How many counters moved (0: nothing written)."""
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql("LOCK TABLE job_metrics IN EXCLUSIVE MODE")
    totals, marks, begun = _counters(connection)
    if not begun and not totals:
        return 0  # nothing has happened: an empty database keeps no rows (`db copy`)
    increments = Increments()
    if not begun:
        start = hour_start(now - HISTORY_KEPT)
        for name, job_type, hour, value in from_rows(connection, start, hour_start(now) + HOUR):
            increments.add(name, job_type, value, bucket=history_hour(hour))
        increments.add(*_BEGUN[:2], 1.0, bucket=_BEGUN[2])
    gains = _gains(totals, marks)
    for (name, job_type), gain in gains.items():
        increments.add(HISTORY_FOLDED, job_type, gain, bucket=name)
        if begun and gain > 0:
            increments.add(SOURCES[name], job_type, gain, bucket=history_hour(now))
    backend.add_metrics(connection, increments, FOLD_SHARD)
    return len(gains)


def begin(backend: Backend, connection: Connection, now: datetime) -> None:
    """The first fold, unless the history has begun (PRUNE calls it before deleting jobs)."""
    begun = select(job_metrics.c.value).where(
        job_metrics.c.name == _BEGUN[0],
        job_metrics.c.job_type == _BEGUN[1],
        job_metrics.c.bucket == _BEGUN[2],
    )
    if connection.execute(begun.limit(1)).first() is None:
        fold(backend, connection, now)


def needs_fold(connection: Connection) -> bool:
    """Whether a fold would write anything (read first, so an idle database gets no write)."""
    totals, marks, begun = _counters(connection)
    return bool(_gains(totals, marks)) if begun else bool(totals)


# --- the history, stored or from the rows -----------------------------------------------------
def stored(connection: Connection, start: datetime, end: datetime) -> list[Entry]:
    """The history rows of the hours from `start` to `end`, summed over their shards."""
    rows = connection.execute(
        summed(
            job_metrics.c.name.in_(HISTORY_NAMES),
            job_metrics.c.bucket >= history_hour(start),
            job_metrics.c.bucket < history_hour(end),
        )
    )
    return [
        (name, job_type, hour_of(bucket), float(total)) for name, job_type, bucket, total in rows
    ]


def seconds_between(connection: Connection, start: Any, end: Any) -> ColumnElement[Any]:
    """`end - start` in seconds, for timestamps as each database stores them."""
    if connection.dialect.name == "sqlite":
        return (func.julianday(end) - func.julianday(start)) * 86400.0
    return func.extract("epoch", end - start)


def from_rows(connection: Connection, start: datetime, end: datetime) -> list[Entry]:
    """The history of the hours from `start` to `end` (whole hours) as the kept job rows tell
    it: completions by `finished_at` with their run time, failed, reclaimed and dead-lettered
    events by their time."""
    origin = literal(start, UTCDateTime)

    def hour_index(moment: Any) -> ColumnElement[Any]:
        return cast(func.floor(seconds_between(connection, origin, moment) / 3600.0), Integer)

    hours = int((end - start) / HOUR)
    entries: list[Entry] = []

    def add(name: str, job_type: str, index: int | None, value: float) -> None:
        hour = start + HOUR * min(max(int(index or 0), 0), hours - 1)  # float edges stay inside
        entries.append((name, job_type, hour, value))

    finished = job_queue.c.finished_at
    index = hour_index(finished).label("hour")
    run = seconds_between(connection, job_queue.c.started_at, finished)
    completed = connection.execute(
        select(job_queue.c.job_type, index, func.count(), func.sum(run))
        .where(job_queue.c.status == "completed", finished >= start, finished < end)
        .group_by(job_queue.c.job_type, index)
    )
    for job_type, hour, count, total in completed:
        add(HISTORY_COMPLETED, job_type, hour, float(count))
        add(HISTORY_RUN_SECONDS, job_type, hour, max(0.0, float(total or 0.0)))
    for name, kinds in (
        (HISTORY_FAILED, ATTEMPT_ERROR_EVENTS),
        (HISTORY_DEAD_LETTERED, (EventKind.DEAD_LETTERED,)),
    ):
        at = job_events.c.at
        index = hour_index(at).label("hour")
        events = connection.execute(
            select(job_queue.c.job_type, index, func.count())
            .select_from(job_events.join(job_queue, job_queue.c.id == job_events.c.job_id))
            .where(job_events.c.kind.in_([kind.value for kind in kinds]))
            .where(at >= start, at < end)
            .group_by(job_queue.c.job_type, index)
        )
        for job_type, hour, count in events:
            add(name, job_type, hour, float(count))
    return entries


def history(connection: Connection, start: datetime, end: datetime, now: datetime) -> list[Entry]:
    """The hours from `start` to `end`, exact at this moment: the stored rows and what is not
    folded yet (in the hour of `now`), or, before the first fold, the job rows."""
    gains = unfolded(connection)
    if gains is None:
        return from_rows(connection, start, end)
    current = hour_start(now)
    return [*stored(connection, start, end), *_in_hour(gains, current)]


def _in_hour(gains: Iterable[tuple[str, str, float]], hour: datetime) -> list[Entry]:
    return [(name, job_type, hour, value) for name, job_type, value in gains]
