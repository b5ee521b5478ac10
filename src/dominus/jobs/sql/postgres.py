"""PostgreSQL-only statements: the claim, the one-round-trip batch insert, and NOTIFY."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, bindparam, text

from dominus.db.types import UTCDateTime
from dominus.jobs.model import Job, NewJob
from dominus.jobs.notifications_channels import CANCEL_CHANNEL, JOBS_CHANNEL
from dominus.jobs.sql.rows import JOB_COLUMNS, job_from_row

_CLAIM = (
    text(
        """
        WITH due AS MATERIALIZED (
            SELECT id
              FROM job_queue
             WHERE status = 'pending' AND run_at <= :now AND job_type = ANY(:job_types)
             ORDER BY priority DESC, run_at, id
             LIMIT :limit
             -- FOR NO KEY UPDATE, not FOR UPDATE: it still stops two workers from taking the
             -- same row, but does not conflict with the KEY SHARE locks that inserting
             -- job_events / dead_letter_jobs rows (foreign keys to job_queue) take.
             -- SKIP LOCKED: a row another worker is claiming at this instant is skipped, not
             -- waited for, so workers never queue behind each other and never double-claim.
               FOR NO KEY UPDATE SKIP LOCKED
        )
        UPDATE job_queue AS job
           SET status = 'running', locked_by = :worker_id, attempts = job.attempts + 1,
               started_at = :now, heartbeat_at = :now, updated_at = :now
          FROM due
         WHERE job.id = due.id
        RETURNING job.*
        """
    )
    .bindparams(bindparam("now", type_=UTCDateTime))
    .columns(*JOB_COLUMNS)
)

# One round trip for a whole batch, however large: every column travels as one array parameter
# (no limit on the number of bind parameters), unnested in order. Ids come from the sequence in
# that order, so sorting them restores the batch order.
_INSERT_MANY = text(
    """
    INSERT INTO job_queue (job_type, payload, status, priority, attempts, max_attempts,
                           failure_count, run_at, created_at, updated_at, timeout_seconds)
    SELECT job_type, payload, 'pending', priority, 0, max_attempts, 0, run_at, :now, :now,
           timeout_seconds
      FROM unnest(CAST(:job_types AS text[]), CAST(:payloads AS jsonb[]),
                  CAST(:priorities AS integer[]), CAST(:max_attempts AS integer[]),
                  CAST(:run_ats AS timestamptz[]), CAST(:timeouts AS double precision[]))
           WITH ORDINALITY
           AS batch(job_type, payload, priority, max_attempts, run_at, timeout_seconds, position)
     ORDER BY position
    RETURNING id
    """
).bindparams(bindparam("now", type_=UTCDateTime))


def claim_jobs(
    connection: Connection, worker_id: str, job_types: Sequence[str], limit: int, now: datetime
) -> list[Job]:
    rows = connection.execute(
        _CLAIM, {"worker_id": worker_id, "now": now, "limit": limit, "job_types": list(job_types)}
    )
    return [job_from_row(row) for row in rows]


def insert_plain_jobs(connection: Connection, jobs: Sequence[NewJob], now: datetime) -> list[int]:
    ids = connection.execute(
        _INSERT_MANY,
        {
            "now": now,
            "job_types": [job.job_type for job in jobs],
            "payloads": [json.dumps(job.payload) for job in jobs],
            "priorities": [job.priority for job in jobs],
            "max_attempts": [job.max_attempts for job in jobs],
            "run_ats": [job.run_at for job in jobs],
            "timeouts": [job.timeout_seconds for job in jobs],
        },
    ).scalars()
    return sorted(ids)


def notify_new_jobs(connection: Connection) -> None:
    """Wake idle workers when this transaction commits (never if it rolls back). No payload:
    a listener wakes its loop whatever became pending, and the claim picks the types."""
    connection.execute(text("SELECT pg_notify(:channel, '')"), {"channel": JOBS_CHANNEL})


def notify_cancel(connection: Connection, worker_id: str) -> None:
    """Tell the worker running a job that its cancel was requested (on commit)."""
    connection.execute(
        text("SELECT pg_notify(:channel, :payload)"),
        {"channel": CANCEL_CHANNEL, "payload": worker_id},
    )
