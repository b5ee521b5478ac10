"""The worker loop's hot transaction on PostgreSQL, on a psycopg connection the loop keeps.

Record a batch of completed attempts and claim for the freed slots: four statements (the
commit-mode setting, the batch completion, the claim, COMMIT) sent in one pipeline, so the
whole transaction costs one network round trip instead of four.

`synchronous_commit = off` for this transaction only: its commit does not wait for the WAL to
reach disk. That is the same promise SQLite makes with `synchronous=NORMAL`: a committed
outcome survives a crash of any DOMINUS process; only a crash of the database server itself can
lose the last fraction of a second of them. Losing one never loses a job: a lost completion
leaves the job `running` until liveness reclaims and reruns it (at-least-once), a lost claim
leaves it `pending`. Enqueues, cancels, failures and dead-lettering keep the server's default
(synchronous) commits. See ADR 0005.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from sqlalchemy import Engine

from dominus.db.errors import database_errors, translated
from dominus.jobs.metrics_model import DURATION_BUCKETS
from dominus.jobs.model import Completed, Job, JobStatus
from dominus.jobs.sql import metrics
from dominus.jobs.sql.sqlite_driver import JOB_FIELDS

# Completes the batch (fenced on each claim) and adds the landed completions to the metrics in
# the same statement, so a tick stays one round trip. Each duration falls in the first bucket
# whose upper bound is not below it, or "+Inf".
_COMPLETE = """
    WITH done AS (
        UPDATE job_queue AS job
           SET status = 'completed', result = batch.result,
               progress = COALESCE(batch.progress, job.progress),
               finished_at = %(now)s, updated_at = %(now)s
          FROM unnest(%(ids)s::bigint[], %(workers)s::text[], %(attempts)s::integer[],
                      %(results)s::jsonb[], %(progresses)s::jsonb[],
                      %(seconds)s::double precision[])
               AS batch(id, worker_id, attempt, result, progress, seconds)
         WHERE job.id = batch.id AND job.locked_by = batch.worker_id
           AND job.attempts = batch.attempt AND job.status = 'running'
        RETURNING job.id, job.job_type, batch.seconds
    ), increments AS (
        SELECT job_type, 'completed' AS name, '' AS bucket, 1.0::double precision AS value
          FROM done
        UNION ALL
        SELECT job_type, 'duration_count', '', 1.0 FROM done WHERE seconds IS NOT NULL
        UNION ALL
        SELECT job_type, 'duration_sum', '', GREATEST(seconds, 0) FROM done
         WHERE seconds IS NOT NULL
        UNION ALL
        SELECT job_type, 'duration_bucket',
               COALESCE((SELECT label FROM unnest(%(bounds)s::double precision[],
                                                  %(labels)s::text[]) AS b(bound, label)
                          WHERE done.seconds <= b.bound ORDER BY b.bound LIMIT 1), '+Inf'),
               1.0
          FROM done WHERE seconds IS NOT NULL
    ), counted AS (
        INSERT INTO job_metrics (name, job_type, bucket, shard, value)
        SELECT name, job_type, bucket, %(shard)s, sum(value)
          FROM increments GROUP BY name, job_type, bucket
        ON CONFLICT (name, job_type, bucket, shard)
        DO UPDATE SET value = job_metrics.value + EXCLUDED.value
    )
    SELECT id FROM done
"""

# The same claim as `dominus.jobs.sql.postgres` (see the lock choices explained there).
_CLAIM = f"""
    WITH due AS MATERIALIZED (
        SELECT id FROM job_queue
         WHERE status = 'pending' AND run_at <= %(now)s AND job_type = ANY(%(job_types)s)
         ORDER BY priority DESC, run_at, id
         LIMIT %(limit)s
           FOR NO KEY UPDATE SKIP LOCKED
    )
    UPDATE job_queue AS job
       SET status = 'running', locked_by = %(worker_id)s, attempts = job.attempts + 1,
           started_at = %(now)s, heartbeat_at = %(now)s, updated_at = %(now)s
      FROM due
     WHERE job.id = due.id
    RETURNING {", ".join(f"job.{name.strip()}" for name in JOB_FIELDS.split(","))}
"""


class PostgresLoopConnections:
    """One held psycopg connection per thread (in practice: the worker loop's)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._local = threading.local()

    def settle_completed(
        self,
        outcomes: Sequence[Completed],
        now: datetime,
        claim_for: tuple[str, Sequence[str], int] | None,
    ) -> tuple[list[bool], list[Job]]:
        """Complete the outcomes (fenced) and claim, in one round trip. Returns which
        completions landed (False: the claim was lost; the caller records that) and the jobs
        claimed."""
        with database_errors():  # checking a connection out can fail too (server down)
            raw = self._connection()
        try:
            with raw.pipeline():
                raw.execute("SET LOCAL synchronous_commit = off")
                completed = raw.execute(_COMPLETE, _completion_parameters(outcomes, now))
                claimed = raw.execute(_CLAIM, _claim_parameters(claim_for, now))
                raw.commit()
            landed = {row[0] for row in completed.fetchall()}
            rows = claimed.fetchall()
        except psycopg.Error as error:
            self._recover(raw, error)
            raise translated(error) from error
        jobs = [_job(row) for row in rows]
        jobs.sort(key=lambda job: (-job.priority, job.run_at, job.id))
        return [outcome.claim.job_id in landed for outcome in outcomes], jobs

    def _connection(self) -> psycopg.Connection[Any]:
        pooled = getattr(self._local, "pooled", None)
        if pooled is None:
            pooled = self._engine.raw_connection()
            self._local.pooled = pooled
        raw = pooled.driver_connection
        assert isinstance(raw, psycopg.Connection)
        return raw

    def _recover(self, raw: psycopg.Connection[Any], error: psycopg.Error) -> None:
        pooled = self._local.pooled
        if raw.closed or isinstance(error, psycopg.OperationalError):
            self._local.pooled = None
            pooled.invalidate()  # a broken connection: the next tick gets a fresh one
            return
        try:
            raw.rollback()
        except psycopg.Error:
            self._local.pooled = None
            pooled.invalidate()


_BOUNDS = list(DURATION_BUCKETS)
_LABELS = list(metrics.BUCKET_LABELS)


def _completion_parameters(outcomes: Sequence[Completed], now: datetime) -> dict[str, Any]:
    writer = outcomes[0].claim.worker_id if outcomes else None
    return {
        "now": now,
        "shard": metrics.shard_for(writer),
        "bounds": _BOUNDS,
        "labels": _LABELS,
        "seconds": [outcome.duration_seconds for outcome in outcomes],
        "ids": [outcome.claim.job_id for outcome in outcomes],
        "workers": [outcome.claim.worker_id for outcome in outcomes],
        "attempts": [outcome.claim.attempt for outcome in outcomes],
        "results": [_encoded(outcome.result) for outcome in outcomes],
        "progresses": [_encoded(outcome.progress) for outcome in outcomes],
    }


def _claim_parameters(
    claim_for: tuple[str, Sequence[str], int] | None, now: datetime
) -> dict[str, Any]:
    worker_id, job_types, limit = claim_for if claim_for else ("", [], 0)
    return {"now": now, "worker_id": worker_id, "job_types": list(job_types), "limit": limit}


def _encoded(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _time(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def _job(row: tuple[Any, ...]) -> Job:
    return Job(
        id=row[0],
        job_type=row[1],
        payload=row[2],
        status=JobStatus(row[3]),
        priority=row[4],
        attempts=row[5],
        max_attempts=row[6],
        failure_count=row[7],
        run_at=row[8].astimezone(UTC),
        created_at=row[9].astimezone(UTC),
        updated_at=row[10].astimezone(UTC),
        started_at=_time(row[11]),
        finished_at=_time(row[12]),
        heartbeat_at=_time(row[13]),
        cancel_requested_at=_time(row[14]),
        locked_by=row[15],
        result=row[16],
        last_error=row[17],
        progress=row[18],
        dedupe_key=row[19],
        timeout_seconds=row[20],
    )
