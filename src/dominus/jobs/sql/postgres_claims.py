"""PostgreSQL's claim statements (ADR 0005, 0034, 0050, 0052).

A claim is two statements in one transaction, sent together (in the worker loop, in the same
pipeline as the completions: one round trip):

1. `LOCK_KEYS` finds the concurrency keys that may get a job now and takes a transaction
   advisory lock on each, in one order, and records their names in the transaction's setting
   `dominus.claim_keys`. With no pending job that has a key, it is one probe of an empty index.
2. The claim takes jobs without a key as before, and jobs of the locked keys within each key's
   free slots, counted from the key's running rows.

Why two: in READ COMMITTED a statement sees the rows committed when it started. A count and a
claim in one statement would race with another worker's claim committed meanwhile (both count
the same free slot). Taking the key's lock in a statement of its own, before the claim starts,
makes every claim of a key wait for the one before it to commit, and then see its rows. A key
that appears between the two statements was not locked: the claim leaves it for the next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from dominus.jobs.concurrency import MAX_CONCURRENCY_LIMIT
from dominus.jobs.model import ClaimRequest
from dominus.jobs.sql.rows import JOB_FIELD_NAMES

# The advisory lock namespace of concurrency keys ("DMCK"); the liveness locks use another.
KEY_LOCK_NAMESPACE = 0x444D434B
# Where LOCK_KEYS leaves the names of the keys it locked, for the claim statements of the same
# transaction (SET LOCAL: gone at COMMIT).
CLAIM_KEYS_SETTING = "dominus.claim_keys"

_PAUSED = "queue NOT IN (SELECT name FROM job_queues WHERE paused)"
_UNCAPPED = MAX_CONCURRENCY_LIMIT + 1
# The payload as text: psycopg would decode the jsonb on the worker loop's thread, and the job
# decodes it only if something reads it (a handler's model validates the text itself).
_RETURNING = ", ".join(
    "job.payload::text" if name == "payload" else f"job.{name}" for name in JOB_FIELD_NAMES
)
# The claimed rows are updated where the walks found and locked them (their `ctid`s, a TID scan)
# rather than joined back by id: with the queue's statistics out of date (a table just filled,
# not yet analysed), PostgreSQL joined by hashing a sequential scan of the whole table, about
# 2 µs a job at 10,000 rows and growing with every completed row kept; a TID scan reads only the
# claimed rows, whatever the statistics. The rows are locked by this statement, so none can
# move before the UPDATE. One difference in a narrow race: a row that another transaction
# changed after this statement's snapshot, and that was still claimable when the walk locked
# it, is now left pending (and unlocked at COMMIT) for the next claim, as a row skipped while
# locked is; joined by id, the UPDATE would have claimed its newer version.
_UPDATE = f"""
    UPDATE job_queue AS job
       SET status = 'running', locked_by = %(worker_id)s, attempts = job.attempts + 1,
           started_at = %(now)s, heartbeat_at = %(now)s, updated_at = %(now)s
     WHERE job.ctid = ANY(ARRAY(SELECT tid FROM due))
    RETURNING {_RETURNING}
"""
# A key's running jobs (claimed ahead included) and the smallest limit among them.
_SLOTS = """
    SELECT count(*) AS running, min(concurrency_limit) AS cap
      FROM job_queue
     WHERE status = 'running' AND concurrency_key IS NOT NULL AND concurrency_key = {key}
"""

# Step 1. `keys`: each key with pending jobs, one probe of the key claim index per key (a loose
# index scan), however many jobs a key holds. A key is locked when its best due job could start
# by the rows this statement sees (a key full now may only free up: it waits for the next
# claim), at most as many keys as the claim may take jobs, best first; locked in the order of
# their lock numbers, so two claims never wait for each other in a circle.
LOCK_KEYS = f"""
    WITH RECURSIVE keys(key) AS (
        (SELECT concurrency_key FROM job_queue
          WHERE status = 'pending' AND concurrency_key IS NOT NULL
          ORDER BY concurrency_key LIMIT 1)
        UNION ALL
        SELECT (SELECT concurrency_key FROM job_queue
                 WHERE status = 'pending' AND concurrency_key IS NOT NULL
                   AND concurrency_key > keys.key
                 ORDER BY concurrency_key LIMIT 1)
          FROM keys WHERE keys.key IS NOT NULL
    ), wanted AS MATERIALIZED (
        SELECT keys.key
          FROM keys
          CROSS JOIN LATERAL (
              SELECT priority, run_at, id, concurrency_limit
                FROM job_queue
               WHERE status = 'pending' AND concurrency_key IS NOT NULL
                 AND concurrency_key = keys.key
                 AND run_at <= %(now)s AND job_type = ANY(%(job_types)s) AND {_PAUSED}
               ORDER BY priority DESC, run_at, id
               LIMIT 1
          ) AS head
          CROSS JOIN LATERAL ({_SLOTS.format(key="keys.key")}) AS slots
         WHERE keys.key IS NOT NULL
           AND slots.running < LEAST(COALESCE(slots.cap, {_UNCAPPED}), head.concurrency_limit)
         ORDER BY head.priority DESC, head.run_at, head.id
         LIMIT %(limit)s
    ), locked AS MATERIALIZED (
        SELECT key, pg_advisory_xact_lock({KEY_LOCK_NAMESPACE}, hashtext(key))
          FROM (SELECT key FROM wanted ORDER BY hashtext(key), key) AS in_lock_order
    )
    SELECT set_config('{CLAIM_KEYS_SETTING}',
                      COALESCE((SELECT array_agg(key)::text FROM locked), ''), true)
"""
# The same, and the worker loop's transaction's asynchronous commit (ADR 0005) in the same
# statement: the loop's pipeline then sends as many statements as before keys existed.
LOCK_KEYS_ASYNC_COMMIT = LOCK_KEYS + ", set_config('synchronous_commit', 'off', true)"

# Step 2, for jobs with a key: each locked key's first LIMIT due jobs in claim order (a walk of
# its part of the key claim index), then the prefix of them that fits: a key's jobs start in
# claim order while the running count, each new one included, stays within the smallest limit
# among the key's running jobs and the ones claimed with it. `{queues}`: the named queues'
# filter, or nothing.
_KEYED = f"""
    SELECT tid, id, priority, run_at FROM (
        SELECT candidate.tid, candidate.id, candidate.priority, candidate.run_at,
               slots.running + row_number() OVER key_order AS would_run,
               LEAST(COALESCE(slots.cap, {_UNCAPPED}),
                     min(candidate.concurrency_limit) OVER key_order) AS allowed
          FROM unnest(NULLIF(current_setting('{CLAIM_KEYS_SETTING}', true), '')::text[])
               AS locked(key)
          CROSS JOIN LATERAL ({_SLOTS.format(key="locked.key")}) AS slots
          CROSS JOIN LATERAL (
              SELECT ctid AS tid, id, priority, run_at, concurrency_limit
                FROM job_queue
               WHERE status = 'pending' AND concurrency_key IS NOT NULL
                 AND concurrency_key = locked.key
                 AND run_at <= %(now)s AND job_type = ANY(%(job_types)s) AND {_PAUSED}
                 {{queues}}
               ORDER BY priority DESC, run_at, id
               LIMIT %(limit)s
                 FOR NO KEY UPDATE SKIP LOCKED
          ) AS candidate
        WINDOW key_order AS (PARTITION BY locked.key
                             ORDER BY candidate.priority DESC, candidate.run_at, candidate.id
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    ) AS ranked
    WHERE would_run <= allowed
"""

# Each wanted queue's own walk of its part of the queue claim index (in claim order, stopping
# after LIMIT rows, skipping rows locked by other claims); a queue paused is left out before its
# walk starts. `{wanted}`: the queues, as `wanted(name)`. Rows a walk locked but the final LIMIT
# left out stay locked (skipped by other claims) only until this transaction ends.
_QUEUE_WALKS = """
            SELECT candidate.tid, candidate.id, candidate.priority, candidate.run_at
              FROM {wanted}
              CROSS JOIN LATERAL (
                  SELECT ctid AS tid, id, priority, run_at
                    FROM job_queue
                   -- `queue` between the name and itself is `queue = wanted.name`, spelled so
                   -- that the planner walks the queue claim index: with an equality on a value
                   -- it cannot see, it reckons a queue is 1/n of the jobs (n queues) and may
                   -- choose another plan, through every other queue's jobs. `queue` leads the
                   -- order for the same reason (one value here: the same order).
                   WHERE status = 'pending' AND concurrency_key IS NULL
                     AND queue >= wanted.name AND queue <= wanted.name
                     AND run_at <= %(now)s AND job_type = ANY(%(job_types)s)
                   ORDER BY queue, priority DESC, run_at, id
                   LIMIT %(limit)s
                 -- FOR NO KEY UPDATE, not FOR UPDATE: it still stops two workers from taking
                 -- the same row, but does not conflict with the KEY SHARE locks that inserting
                 -- job_events / dead_letter_jobs rows (foreign keys to job_queue) take.
                 -- SKIP LOCKED: a row another worker is claiming at this instant is skipped,
                 -- not waited for, so workers never queue behind each other and never
                 -- double-claim.
                     FOR NO KEY UPDATE SKIP LOCKED
              ) AS candidate
             -- Paused queues, read by the claim itself (ADR 0050).
             WHERE wanted.name NOT IN (SELECT name FROM job_queues WHERE paused)
"""

_QUEUES_WITH_JOBS = "(SELECT name FROM queues WHERE name IS NOT NULL) AS wanted(name)"
_NAMED_QUEUES = "unnest(%(queues)s::text[]) AS wanted(name)"

# The claim of a worker that takes every queue (ADR 0061): the queues with pending jobs found
# by one probe of the queue claim index per queue (a loose index scan), each walked as a named
# queue is, then the best LIMIT of those. One claim index serves both claims, so an enqueue and
# a claim each write one index entry fewer.
CLAIM = f"""
    WITH RECURSIVE queues(name) AS (
        (SELECT queue FROM job_queue
          WHERE status = 'pending' AND concurrency_key IS NULL
          ORDER BY queue LIMIT 1)
        UNION ALL
        SELECT (SELECT queue FROM job_queue
                 WHERE status = 'pending' AND concurrency_key IS NULL AND queue > queues.name
                 ORDER BY queue LIMIT 1)
          FROM queues WHERE queues.name IS NOT NULL
    ), due AS MATERIALIZED (
        SELECT tid FROM (
            {_QUEUE_WALKS.format(wanted=_QUEUES_WITH_JOBS)}
            UNION ALL
            {_KEYED.format(queues="")}
        ) AS candidates
        ORDER BY priority DESC, run_at, id
        LIMIT %(limit)s
    )
    {_UPDATE}
"""

# The claim of a worker that names its queues: the same walks, of the named queues; one
# statement whatever the number of queues.
CLAIM_QUEUES = f"""
    WITH due AS MATERIALIZED (
        SELECT tid FROM (
            {_QUEUE_WALKS.format(wanted=_NAMED_QUEUES)}
            UNION ALL
            {_KEYED.format(queues="AND queue = ANY(%(queues)s::text[])")}
        ) AS candidates
        ORDER BY priority DESC, run_at, id
        LIMIT %(limit)s
    )
    {_UPDATE}
"""


def claim_statement(request: ClaimRequest) -> str:
    return CLAIM if request.queues is None else CLAIM_QUEUES


def claim_parameters(request: ClaimRequest, now: datetime) -> dict[str, Any]:
    parameters = {
        "now": now,
        "worker_id": request.worker_id,
        "job_types": list(request.job_types),
        "limit": request.limit,
    }
    if request.queues is not None:
        parameters["queues"] = list(request.queues)
    return parameters


def lock_parameters(requests: Sequence[ClaimRequest], now: datetime) -> dict[str, Any]:
    """LOCK_KEYS for every request of a transaction at once: a second LOCK_KEYS in the same
    transaction could take a key ordered before one the first took, and two claims doing that
    could wait for each other."""
    job_types = sorted({job_type for request in requests for job_type in request.job_types})
    return {
        "now": now,
        "job_types": job_types,
        "limit": sum(request.limit for request in requests),
    }
