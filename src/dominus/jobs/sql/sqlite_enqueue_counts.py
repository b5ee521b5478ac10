"""SQLite: the `enqueued` counters, counted after the fact from the queue's own rows (ADR 0036).

An enqueue on SQLite writes its job row and nothing else: the counter upsert that used to share
its transaction was a third B-tree page in every commit, about a quarter of a single enqueue's
cost. The counters stay exact all the same:

    enqueued(type) = the stored counter + the rows of that type above the mark

where the mark (a bookkeeping row of `job_metrics`) is the highest job id already counted.
Folding moves the rows above the mark into the counters and the mark up to the newest row, in
one write transaction; the worker's maintenance thread folds every few seconds, so a reading
counts few rows. Two facts make it exact:

- SQLite gives a new row max(id) + 1 (the table has no AUTOINCREMENT), and writers are
  serialised, so every row enqueued after a fold gets an id above its mark;
- the one thing that deletes job rows (pruning) folds first and sets the mark again after, in
  its transaction: a new row may then reuse a deleted newest row's id, which is above the mark
  again. `mark_counted` is for a database whose counters already include every row (a copy).

PostgreSQL cannot do this (sequence values are not handed out in commit order), and counts in
the enqueue's own statement, which costs it little next to the network round trip.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from dominus.jobs.metrics_model import ENQUEUED, ENQUEUED_COUNTED_THROUGH

_MARK = (
    "SELECT value FROM job_metrics "
    "WHERE name = :mark AND job_type = '' AND bucket = '' AND shard = 0"
)
# The id range above the mark is a range of the table's rowid: a reading walks only those rows.
_UNCOUNTED = (
    f"SELECT job_type, count(*) FROM job_queue WHERE id > COALESCE(({_MARK}), 0) GROUP BY job_type"
)
_FOLDED = f"SELECT COALESCE(max(id), 0) = COALESCE(({_MARK}), 0) FROM job_queue"
_FOLD = (
    "INSERT INTO job_metrics (name, job_type, bucket, shard, value) "
    f"SELECT :counter, job_type, '', 0, count(*) FROM job_queue "
    f"WHERE id > COALESCE(({_MARK}), 0) GROUP BY job_type "
    "ON CONFLICT (name, job_type, bucket, shard) DO UPDATE SET value = value + excluded.value"
)
# The newest id read as a scalar subquery, which SQLite answers from one end of the rowid
# B-tree; an aggregate over the table with a HAVING clause (the empty queue's test) made it count
# every row, 38 ms on a million. WHERE: no row at all for an empty queue (an empty database
# stays without rows).
_NEWEST = "(SELECT max(id) FROM job_queue)"
_SET_MARK = (
    "INSERT INTO job_metrics (name, job_type, bucket, shard, value) "
    f"SELECT :mark, '', '', 0, {_NEWEST} WHERE {_NEWEST} IS NOT NULL "
    "ON CONFLICT (name, job_type, bucket, shard) DO UPDATE SET value = excluded.value"
)
_DROP_MARK = "DELETE FROM job_metrics WHERE name = :mark AND NOT EXISTS (SELECT 1 FROM job_queue)"
_NAMES = {"mark": ENQUEUED_COUNTED_THROUGH, "counter": ENQUEUED}


def uncounted(raw: sqlite3.Connection) -> Mapping[str, int]:
    """Jobs enqueued and not in the counters yet, by type."""
    rows = raw.execute(_UNCOUNTED, _NAMES).fetchall()
    return {job_type: int(count) for job_type, count in rows}


def all_counted(raw: sqlite3.Connection) -> bool:
    """Whether a fold would change nothing."""
    return bool(raw.execute(_FOLDED, _NAMES).fetchone()[0])


def fold(raw: sqlite3.Connection) -> None:
    """Count the rows above the mark and set the mark to the newest row, in the caller's write
    transaction. Before deleting job rows and after, in the same transaction (module docstring)."""
    raw.execute(_FOLD, _NAMES)
    mark_counted(raw)


def mark_counted(raw: sqlite3.Connection) -> None:
    """Set the mark to the newest row (no mark at all for an empty queue: new ids start again
    at 1): the caller vouches that the counters include every row."""
    raw.execute(_DROP_MARK, _NAMES)
    raw.execute(_SET_MARK, _NAMES)
