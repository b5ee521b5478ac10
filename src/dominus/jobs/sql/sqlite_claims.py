"""SQLite's claim statements: jobs without a concurrency key from the claim indexes, and, only
while some pending job has a key, those jobs too, each key within its free slots (ADR 0050, 0052).

The claim runs in a transaction begun with BEGIN IMMEDIATE (the worker loop's and the engine's
write transactions both are), and a key's slots are counted inside the claim's own UPDATE: the
write lock is held before anything is counted, and no other writer can claim between the count
and the claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from dominus.jobs.concurrency import MAX_CONCURRENCY_LIMIT
from dominus.jobs.sql.rows import JOB_FIELDS

# Paused queues (`job_queues`), read by the claim itself: a pause holds from its commit on,
# for every worker on every host, with nothing cached (ADR 0050). A tiny table, read once per
# claim (SQLite materialises the list before walking the claim index).
_PAUSED = "SELECT name FROM job_queues WHERE paused = 1"
_CLAIMED = "ORDER BY priority DESC, run_at, id LIMIT ?"
_UNKEYED = "status = 'pending' AND concurrency_key IS NULL"
_KEYED = "status = 'pending' AND concurrency_key IS NOT NULL"

# Whether any pending job has a key: one probe of a partial index that is empty unless some job
# uses a key. Without one, the claim is the statement of before (ADR 0052).
HAS_KEYED_PENDING = (
    f"SELECT 1 FROM job_queue INDEXED BY ix_job_queue_key_claim WHERE {_KEYED} LIMIT 1"
)


@lru_cache(maxsize=64)
def claim_sql(type_count: int, queue_count: int = 0, keyed: bool = False) -> str:
    """The claim of `type_count` job types from every queue (`queue_count` 0) or from that many
    named queues; `keyed`: jobs with a concurrency key too. Parameters: `claim_parameters`."""
    due = _due_sql(type_count, queue_count, "id, priority, run_at" if keyed else "id")
    if keyed:
        due = (
            f"{_KEYED_CANDIDATES.format(filters=_filters(type_count, queue_count))} "
            f"SELECT id FROM (SELECT id, priority, run_at FROM ({due}) "
            f"UNION ALL SELECT id, priority, run_at FROM keyed) {_CLAIMED}"
        )
    return (
        "UPDATE job_queue SET status = 'running', locked_by = ?, attempts = attempts + 1, "
        "started_at = ?, heartbeat_at = ?, updated_at = ? "
        f"WHERE id IN ({due}) "
        f"RETURNING {JOB_FIELDS}"
    )


def claim_parameters(
    worker_id: str,
    stamp: str,
    job_types: Sequence[str],
    limit: int,
    queues: Sequence[str] | None,
    keyed: bool = False,
) -> tuple[Any, ...]:
    head = (worker_id, stamp, stamp, stamp)
    keyed_head = (stamp, *job_types, *(queues or ()), limit) if keyed else ()
    keyed_tail = (limit,) if keyed else ()
    if not queues:
        return (*head, *keyed_head, stamp, *job_types, limit, limit, *keyed_tail)
    per_queue = [(queue, stamp, *job_types, queue, limit) for queue in queues]
    tail = (limit,) if len(queues) > 1 else ()
    return (*head, *keyed_head, *(value for arm in per_queue for value in arm), *tail, *keyed_tail)


def _due_sql(type_count: int, queue_count: int, columns: str) -> str:
    # The literal predicate lets the planner match the partial claim index, and INDEXED BY holds
    # it there: walking a queue's part of the claim index in order stops after LIMIT rows,
    # however many jobs wait or have finished, where any other plan would sort every pending row
    # on every claim.
    types = ", ".join("?" * type_count)
    if queue_count == 0:  # parameters: now, *types, limit, limit
        return f"SELECT {columns} FROM ({_EVERY_QUEUE.format(types=types)})"
    # Named queues: each queue's own walk of its part of the queue claim index, stopping after
    # LIMIT rows as above, then the best LIMIT of those. Parameters, per queue: queue, now,
    # *types, queue, limit; then limit.
    one_queue = (
        "SELECT id, priority, run_at FROM (SELECT id, priority, run_at FROM job_queue "
        "INDEXED BY ix_job_queue_queue_claim "
        f"WHERE {_UNKEYED} AND queue = ? AND run_at <= ? AND job_type IN ({types}) "
        f"AND ? NOT IN ({_PAUSED}) {_CLAIMED})"
    )
    if queue_count == 1:
        return f"SELECT {columns} FROM ({one_queue})"
    arms = " UNION ALL ".join([one_queue] * queue_count)
    return f"SELECT {columns} FROM ({arms}) {_CLAIMED}"


# Every queue (ADR 0061): the queues with pending jobs found by one probe of the claim index per
# queue (a loose index scan), each queue not paused walked as a named queue is, then the best
# LIMIT of those. One index serves both claims, so an enqueue and a claim each write one claim
# index entry fewer. Parameters: now, *types, limit, limit.
_EVERY_QUEUE = (
    "WITH RECURSIVE queues(name) AS ("
    " SELECT min(queue) FROM job_queue INDEXED BY ix_job_queue_queue_claim"
    f" WHERE {_UNKEYED}"
    " UNION ALL"
    " SELECT (SELECT min(queue) FROM job_queue INDEXED BY ix_job_queue_queue_claim"
    f" WHERE {_UNKEYED} AND queue > queues.name)"
    " FROM queues WHERE queues.name IS NOT NULL"
    ") "
    "SELECT job.id AS id, job.priority AS priority, job.run_at AS run_at"
    " FROM queues CROSS JOIN job_queue AS job"
    f" WHERE queues.name IS NOT NULL AND queues.name NOT IN ({_PAUSED}) AND job.id IN ("
    "  SELECT id FROM job_queue INDEXED BY ix_job_queue_queue_claim"
    f"  WHERE {_UNKEYED} AND queue = queues.name AND run_at <= ? AND job_type IN ({{types}})"
    f"  {_CLAIMED})"
    " ORDER BY job.priority DESC, job.run_at, job.id LIMIT ?"
)


def _filters(type_count: int, queue_count: int) -> str:
    types = ", ".join("?" * type_count)
    named = f"AND queue IN ({', '.join('?' * queue_count)}) " if queue_count else ""
    return f"run_at <= ? AND job_type IN ({types}) {named}AND queue NOT IN ({_PAUSED})"


# The jobs with a key that may start now, best first. `keys` finds each key with pending jobs by
# one probe of the key claim index per key (a loose index scan), however many jobs a key holds.
# `slots`: each key's running jobs (claimed ahead included) and the smallest limit among them.
# `candidates`: each key that has a free slot gives its first LIMIT due jobs in claim order (a
# walk of its part of the key claim index, stopping after LIMIT). A key's jobs start in claim
# order while the running count, each new one included, stays within the smallest limit among
# the key's running jobs and the ones claimed with it: a prefix of its candidates.
# Parameters: now, *types, *queues, limit.
_KEYED_CANDIDATES = (
    "WITH RECURSIVE keys(key) AS ("
    " SELECT min(concurrency_key) FROM job_queue INDEXED BY ix_job_queue_key_claim"
    f" WHERE {_KEYED}"
    " UNION ALL"
    " SELECT (SELECT min(concurrency_key) FROM job_queue INDEXED BY ix_job_queue_key_claim"
    f" WHERE {_KEYED} AND concurrency_key > keys.key)"
    " FROM keys WHERE keys.key IS NOT NULL"
    "), slots AS ("
    " SELECT key,"
    " (SELECT count(*) FROM job_queue INDEXED BY ix_job_queue_key_running"
    "  WHERE status = 'running' AND concurrency_key IS NOT NULL AND concurrency_key = keys.key)"
    " AS running,"
    " (SELECT min(concurrency_limit) FROM job_queue INDEXED BY ix_job_queue_key_running"
    "  WHERE status = 'running' AND concurrency_key IS NOT NULL AND concurrency_key = keys.key)"
    " AS cap"
    " FROM keys WHERE key IS NOT NULL"
    "), candidates AS ("
    " SELECT job.id, job.priority, job.run_at, job.concurrency_key AS key,"
    " job.concurrency_limit AS key_limit, slots.running,"
    f" coalesce(slots.cap, {MAX_CONCURRENCY_LIMIT}) AS cap"
    " FROM slots CROSS JOIN job_queue AS job"
    " WHERE slots.running < coalesce(slots.cap, "
    f"{MAX_CONCURRENCY_LIMIT}) AND job.id IN ("
    "  SELECT id FROM job_queue INDEXED BY ix_job_queue_key_claim"
    f"  WHERE {_KEYED} AND concurrency_key = slots.key AND {{filters}} {_CLAIMED})"
    "), keyed AS ("
    " SELECT id, priority, run_at FROM ("
    "  SELECT id, priority, run_at, running + row_number() OVER key_order AS would_run,"
    "  min(cap, min(key_limit) OVER key_order) AS allowed FROM candidates"
    "  WINDOW key_order AS (PARTITION BY key ORDER BY priority DESC, run_at, id"
    "  ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))"
    " WHERE would_run <= allowed"
    ")"
)
