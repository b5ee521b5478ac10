"""The PostgreSQL backend: its spelling of every statement that differs by database (ADR 0028).

The claim and the batch completion are plain psycopg SQL, sent as they are both from a
SQLAlchemy transaction (`exec_driver_sql`) and from the worker loop's own connection, so each is
written once. The loop's hot transaction (the commit-mode setting, the batch completion, the
claim, COMMIT) goes in one pipeline: one network round trip instead of four. The common
enqueue of one job is one statement in autocommit mode (ADR 0034); a batch goes in by binary
COPY (ADR 0035).

`synchronous_commit = off` for that transaction only: its commit does not wait for the WAL to
reach disk. That is the same promise SQLite makes with `synchronous=NORMAL`: a committed
outcome survives a crash of any DOMINUS process; only a crash of the database server itself can
lose the last fraction of a second of them. Losing one never loses a job: a lost completion
leaves the job `running` until liveness reclaims and reruns it (at-least-once), a lost claim
leaves it `pending`. Enqueues, cancels, failures and dead-lettering keep the server's default
(synchronous) commits. See ADR 0005.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from sqlalchemy import Connection, Engine, Select, Table, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.dml import Insert

from dominus.db.errors import database_errors, translated
from dominus.jobs.advisory_lock import AdvisoryLivenessLock
from dominus.jobs.clock import Clock, DatabaseClock
from dominus.jobs.liveness import (
    ADVISORY,
    ADVISORY_NAMESPACE,
    HELD_ADVISORY_KEYS_SQL,
    LivenessLock,
    LockOwner,
    free_advisory_owners,
)
from dominus.jobs.metrics_model import DURATION_BUCKETS, ENQUEUED, PICKUP_BUCKETS
from dominus.jobs.model import PAYLOAD_TEXT, ClaimRequest, Completed, Job, NewJob
from dominus.jobs.notifications import PostgresListener
from dominus.jobs.notifications_channels import CANCEL_CHANNEL, JOBS_CHANNEL, due_payload
from dominus.jobs.sql.array_literals import number_array, repeated_text_array, text_array
from dominus.jobs.sql.driver_connections import DriverConnections
from dominus.jobs.sql.metrics import BUCKET_LABELS, PICKUP_LABELS, Increments, shard_for
from dominus.jobs.sql.postgres_claims import (
    LOCK_KEYS,
    LOCK_KEYS_ASYNC_COMMIT,
    claim_parameters,
    claim_statement,
    lock_parameters,
)
from dominus.jobs.sql.postgres_vacuum import QueueVacuum
from dominus.jobs.sql.rate_gate import (
    PostgresGate,
    PostgresTakes,
    PrepaidPostgresGate,
    gate,
    postgres_takes,
    take_claimed_parameters,
)
from dominus.jobs.sql.rows import JOB_FIELD_NAMES, job_from_fields, job_status
from dominus.jobs.sql.tables import (
    ENQUEUE_TIME_COLUMNS,
    JOB_VALUE_COLUMNS,
    NEW_JOB_COLUMN_LIST,
    NEW_JOB_COLUMNS,
    new_job_values,
)
from dominus.jobs.wakeup import ChangeWatcher

log = logging.getLogger("dominus.worker")


def _bucket_counts(column: str, metric: str, bounds: str, labels: str, count: int) -> str:
    """The SELECT that counts the completed rows' `column` (seconds; NULL when not measured) in
    `metric`'s buckets, one row per job type and bucket; `bounds` and `labels` name the
    statement's parameters holding the histogram's `count` upper bounds, negated in descending
    order (`_negated_bounds`), and their labels in ascending order.

    A value's bucket is the first bound not below it: `width_bucket` of the negated value
    counts the bounds at or above it (k), so the bucket is the (count + 1 - k)-th; none (k = 0,
    or NaN, which PostgreSQL sorts above every bound) is "+Inf". One array lookup a row, where
    a subquery that unnested and sorted the bounds for each row cost the server about 3 µs."""
    return f"""
        SELECT job_type, '{metric}_bucket' AS name,
               COALESCE(CASE WHEN {column} <> 'NaN'
                             THEN (%({labels})s::text[])[
                                 {count + 1} - width_bucket(-{column},
                                                            %({bounds})s::double precision[])]
                        END, '+Inf') AS bucket,
               count(*)::double precision AS value
          FROM done WHERE {column} IS NOT NULL
         GROUP BY job_type, bucket
"""


# The metrics increments of the completed rows (`done`: job_type, seconds, pickup), one row per
# metric, job type and bucket: counted per job type (and bucket) before they become rows, three
# passes over the completed rows, where a row per increment (seven a job) grouped afterwards
# cost more. Each sum adds the same values in the same order as that did; a count or a sum with
# no value (nothing measured) gives no row, as no increment did.
_INCREMENTS = f"""
    totals AS (
        SELECT job_type, count(*)::double precision AS completed,
               count(seconds)::double precision AS durations,
               sum(GREATEST(seconds, 0)) FILTER (WHERE seconds IS NOT NULL) AS duration_sum,
               count(pickup)::double precision AS pickups,
               sum(GREATEST(pickup, 0)) FILTER (WHERE pickup IS NOT NULL) AS pickup_sum
          FROM done GROUP BY job_type
    ), increments AS (
        SELECT totals.job_type, total.name, '' AS bucket, total.value
          FROM totals CROSS JOIN LATERAL (
              VALUES ('completed', completed),
                     ('duration_count', NULLIF(durations, 0)),
                     ('duration_sum', duration_sum),
                     ('pickup_count', NULLIF(pickups, 0)),
                     ('pickup_sum', pickup_sum)
          ) AS total(name, value)
         WHERE total.value IS NOT NULL
        UNION ALL
        {_bucket_counts("seconds", "duration", "bounds", "labels", len(DURATION_BUCKETS))}
        UNION ALL
        {_bucket_counts("pickup", "pickup", "pickup_bounds", "pickup_labels", len(PICKUP_BUCKETS))}
    )
"""


# Completes the batch (fenced on each claim) and adds the landed completions to the metrics in
# the same statement, so a tick stays one round trip. Each duration falls in the first bucket
# whose upper bound is not below it, or "+Inf".
# Never run as a prepared statement (`prepare=False`): the generic plan PostgreSQL settles on
# after a few executions guesses 10 rows for the batch and one for `running`, and joins by
# unnesting the whole batch again for every running row of every worker; that cost grew with
# running rows × batch size (23 ms for 127 completions with 4 workers, bench/pg_profile.py).
# Planned with the batch at hand, it is a hash join: about 1 ms for 100.
_COMPLETE = f"""
    WITH done AS (
        UPDATE job_queue AS job
           SET status = 'completed', result = batch.result,
               progress = COALESCE(batch.progress, job.progress),
               finished_at = %(now)s, updated_at = %(now)s
          FROM unnest(%(ids)s::bigint[], %(workers)s::text[], %(attempts)s::integer[],
                      %(results)s::jsonb[], %(progresses)s::jsonb[],
                      %(seconds)s::double precision[], %(pickups)s::double precision[])
               AS batch(id, worker_id, attempt, result, progress, seconds, pickup)
         WHERE job.id = batch.id AND job.locked_by = batch.worker_id
           AND job.attempts = batch.attempt AND job.status = 'running'
        RETURNING job.id, job.job_type, batch.seconds, batch.pickup
    ), {_INCREMENTS}, counted AS (
        INSERT INTO job_metrics (name, job_type, bucket, shard, value)
        SELECT name, job_type, bucket, %(shard)s, value FROM increments
        ON CONFLICT (name, job_type, bucket, shard)
        DO UPDATE SET value = job_metrics.value + EXCLUDED.value
    )
    SELECT id FROM done
"""


def _batch_value(name: str) -> str:
    return "%(now)s" if name in ENQUEUE_TIME_COLUMNS else name


def _one_value(name: str) -> str:
    if name in ENQUEUE_TIME_COLUMNS:
        return "%(now)s"
    return "%(payload)s::jsonb" if name == "payload" else f"%({name})s"


# One round trip for a whole batch, however large: every column travels as one array parameter
# (no limit on the number of bind parameters), unnested in order. Ids come from the sequence in
# that order, so sorting them restores the batch order.
_INSERT_MANY = f"""
    INSERT INTO job_queue ({NEW_JOB_COLUMN_LIST})
    SELECT {new_job_values(lambda column: _batch_value(column.name))}
      FROM unnest({", ".join(f"%({c.name})s::{c.pg_type}[]" for c in JOB_VALUE_COLUMNS)})
           WITH ORDINALITY AS batch({", ".join(c.name for c in JOB_VALUE_COLUMNS)}, position)
     ORDER BY position
    RETURNING id
"""

# The whole batch in one statement (keys are unique within a batch by construction).
_UPSERT_METRICS = """
    INSERT INTO job_metrics (name, job_type, bucket, shard, value)
    SELECT * FROM unnest(%(names)s::text[], %(types)s::text[], %(buckets)s::text[],
                         %(shards)s::smallint[], %(values)s::double precision[])
    ON CONFLICT (name, job_type, bucket, shard)
    DO UPDATE SET value = job_metrics.value + EXCLUDED.value
"""

_NOTIFY = "SELECT pg_notify(%(channel)s, %(payload)s)"

# A single job, the common enqueue, as one statement run in autocommit mode: insert, count and
# notify in one implicit transaction (all or nothing; the NOTIFY goes out on its commit), one
# message, one round trip (ADR 0034). Spelled with VALUES, not the batch's unnest: for one row
# the array form cost about 110 µs more a call on the server (ADR 0035). `notified` calls a
# volatile function, so PostgreSQL evaluates it once, not inlined per row.
_ENQUEUE_ONE = f"""
    WITH inserted AS (
        INSERT INTO job_queue ({NEW_JOB_COLUMN_LIST})
        VALUES ({new_job_values(lambda column: _one_value(column.name))})
        RETURNING id, job_type
    ), counted AS (
        INSERT INTO job_metrics (name, job_type, bucket, shard, value)
        SELECT %(counter)s, job_type, '', %(shard)s, 1 FROM inserted
        ON CONFLICT (name, job_type, bucket, shard)
        DO UPDATE SET value = job_metrics.value + EXCLUDED.value
    ), notified AS (SELECT pg_notify(%(channel)s, %(due_at)s))
    SELECT inserted.id FROM inserted CROSS JOIN notified
"""

# A batch goes in by COPY (ADR 0035): ids are taken from the table's sequence first, so that the
# rows can be written with them and each job's id is known without reading the rows back.
_NEXT_IDS = (
    "SELECT nextval(pg_get_serial_sequence('job_queue', 'id')) FROM generate_series(1, %(count)s)"
)
_COPY_COLUMNS = (("id", "int8"), *((c.name, c.pg_type) for c in NEW_JOB_COLUMNS))
_COPY = (
    f"COPY job_queue ({', '.join(name for name, _ in _COPY_COLUMNS)}) FROM STDIN (FORMAT BINARY)"
)
_COPY_TYPES = [type_name for _, type_name in _COPY_COLUMNS]
# The batch's counters and its NOTIFY, after the COPY, in its transaction.
_COUNT_AND_NOTIFY = f"""
    WITH counted AS ({_UPSERT_METRICS}), notified AS (SELECT pg_notify(%(channel)s, %(due_at)s))
    SELECT 1 FROM notified
"""


# The histograms' bounds and labels, sent with every settle: written once.
def _negated_bounds(bounds: Sequence[float], labels: Sequence[str]) -> tuple[str, str]:
    """A histogram's bounds negated, in ascending order (as `width_bucket` takes them), and its
    labels in the bounds' ascending order (see `_bucket_counts`)."""
    ordered = sorted(zip(bounds, labels, strict=True))
    negated = [-bound for bound, _ in reversed(ordered)]
    return number_array(negated), text_array([label for _, label in ordered])


_BOUNDS, _LABELS = _negated_bounds(DURATION_BUCKETS, BUCKET_LABELS)
_PICKUP_BOUNDS, _PICKUP_LABELS = _negated_bounds(PICKUP_BUCKETS, PICKUP_LABELS)


class PostgresBackend:
    """PostgreSQL through psycopg 3 (see the module's docstring). `server_clock`: the rate
    gate stamps its tokens with the server's clock (`backend.stamps_with_server_clock`)."""

    name = "postgresql"
    # A claim locks only its own rows, and each tick has fixed costs on the server (its
    # transaction, the lock statement, planning the completion): more jobs a tick spread them
    # (ADR 0033).
    default_max_prefetch = 1024

    def __init__(self, engine: Engine, *, server_clock: bool = True) -> None:
        self._engine = engine
        self._takes = postgres_takes(server_clock)
        self._loop = _LoopConnection(engine, self._takes)
        self._connections = DriverConnections(engine, prepare=_autocommit)
        self._vacuum = QueueVacuum(engine)

    # --- statements in the caller's transaction ------------------------------------------
    def claim(
        self,
        connection: Connection,
        worker_id: str,
        job_types: Sequence[str],
        limit: int,
        now: datetime,
        queues: Sequence[str] | None = None,
    ) -> list[Job]:
        return self.claim_many(connection, [ClaimRequest(worker_id, job_types, limit, queues)], now)

    def claim_many(
        self, connection: Connection, requests: Sequence[ClaimRequest], now: datetime
    ) -> list[Job]:
        if not requests:
            return []
        raw = connection.connection.driver_connection
        assert isinstance(raw, psycopg.Connection)
        # The key locks and the claims in one round trip, as in the worker loop's settle.
        with raw.pipeline():
            raw.execute(LOCK_KEYS, lock_parameters(requests, now))
            claims = [_claim(raw, request, now) for request in requests]
        jobs = _claimed_jobs([row for claimed in claims for row in claimed.fetchall()])
        if any(job.rate_key is not None for job in jobs):
            # In the claim's transaction: a job refused a token is never seen running.
            return gate(PostgresGate(raw, self._takes), jobs, now)
        return jobs

    def insert_plain(
        self, connection: Connection, jobs: Sequence[NewJob], now: datetime
    ) -> list[int]:
        rows = connection.exec_driver_sql(_INSERT_MANY, _insert_parameters(jobs, now))
        return sorted(row[0] for row in rows)

    def insert_or_ignore(
        self,
        table: Table,
        values: dict[str, Any],
        *,
        index_elements: Sequence[str] | None = None,
        index_where: Any = None,
    ) -> Insert:
        statement: Insert = (
            postgresql.insert(table)
            .values(values)
            .on_conflict_do_nothing(index_elements=index_elements, index_where=index_where)
        )
        return statement

    def complete(
        self, connection: Connection, outcomes: Sequence[Completed], now: datetime
    ) -> list[bool]:
        raw = connection.connection.driver_connection
        assert isinstance(raw, psycopg.Connection)
        rows = raw.execute(_COMPLETE, _completion_parameters(outcomes, now), prepare=False)
        return _landed(outcomes, rows.fetchall())

    def add_metrics(self, connection: Connection, increments: Increments, shard: int) -> None:
        if not increments:
            return
        connection.exec_driver_sql(_UPSERT_METRICS, _metric_parameters(increments, shard))

    def count_enqueued(self, connection: Connection, job_types: Sequence[str]) -> None:
        # In the enqueue's transaction: sequence values are not handed out in commit order, so
        # the rows cannot be counted after the fact as on SQLite (ADR 0036).
        self.add_metrics(connection, Increments().enqueued(job_types), shard_for())

    def uncounted_enqueues(self, connection: Connection) -> Mapping[str, int]:
        return {}  # every enqueue is counted in its own transaction

    def fold_enqueues(self, connection: Connection) -> None:
        """Nothing to fold (see `count_enqueued`)."""

    def mark_enqueues_counted(self, connection: Connection) -> None:
        """Nothing to mark (see `count_enqueued`)."""

    def lock_row(self, query: Select[Any]) -> Select[Any]:
        # FOR NO KEY UPDATE: the lock every UPDATE of the row needs (a reclaim, a heartbeat, a
        # settle), held until COMMIT; it does not block inserts of rows that refer to the job.
        return query.with_for_update(key_share=True)

    def notify_new_jobs(self, connection: Connection, due_at: datetime | None = None) -> None:
        # A listener wakes its loop whatever became pending (the claim picks types), at `due_at`
        # if its own clock does not see it yet (ADR 0062).
        connection.exec_driver_sql(
            _NOTIFY, {"channel": JOBS_CHANNEL, "payload": due_payload(due_at)}
        )

    def notify_cancel(self, connection: Connection, worker_id: str) -> None:
        connection.exec_driver_sql(_NOTIFY, {"channel": CANCEL_CHANNEL, "payload": worker_id})

    # --- the worker loop's own connection, housekeeping ----------------------------------
    def settle_completed(
        self,
        outcomes: Sequence[Completed],
        now: datetime,
        claim_for: Sequence[ClaimRequest],
    ) -> tuple[list[bool], list[Job]]:
        return self._loop.settle_completed(outcomes, now, claim_for)

    def enqueue_plain(self, jobs: Sequence[NewJob], now: datetime) -> list[int]:
        # A connection of the backend's own, kept in autocommit mode: no pool checkout, and no
        # switching modes back for the pool's other users (ADR 0035).
        with self._connections.lent() as raw:
            return _enqueue_one(raw, jobs[0], now) if len(jobs) == 1 else _copy_in(raw, jobs, now)

    def maintain(self) -> str | None:
        return self._vacuum.maintain()

    def liveness_lock(self, worker_id: str) -> LivenessLock | None:
        return AdvisoryLivenessLock(self._conninfo(), worker_id)

    def free_lock_owners(self, connection: Connection, owners: Sequence[LockOwner]) -> set[str]:
        if not any(owner.kind == ADVISORY for owner in owners):
            return set()
        rows = connection.execute(text(HELD_ADVISORY_KEYS_SQL), {"namespace": ADVISORY_NAMESPACE})
        return free_advisory_owners(owners, {int(row[0]) for row in rows})

    def forget_dead_workers(self, worker_ids: Sequence[str]) -> None:
        """Nothing to remove: a session's advisory lock leaves nothing behind."""

    def _conninfo(self) -> str:
        url = self._engine.url.set(drivername="postgresql")
        return url.render_as_string(hide_password=False)

    def verify(self) -> None:
        """Nothing to check: a server's database cannot be swapped under an open connection."""

    def clock(self) -> Clock:
        return DatabaseClock(self._engine)

    def change_watcher(self) -> ChangeWatcher:
        return PostgresListener(self._conninfo())


class _LoopConnection:
    """One held psycopg connection per thread (in practice: the worker loop's)."""

    def __init__(self, engine: Engine, takes: PostgresTakes) -> None:
        self._engine = engine
        self._takes = takes
        self._local = threading.local()

    def settle_completed(
        self,
        outcomes: Sequence[Completed],
        now: datetime,
        claim_for: Sequence[ClaimRequest],
    ) -> tuple[list[bool], list[Job]]:
        """Complete the outcomes (fenced) and claim, in one round trip. Returns which
        completions landed (False: the claim was lost; the caller records that) and the jobs
        claimed."""
        with database_errors():  # checking a connection out can fail too (server down)
            raw = self._connection()
        try:
            with raw.pipeline():
                if claim_for:
                    # The key locks first: the claims' snapshots are taken after them.
                    raw.execute(LOCK_KEYS_ASYNC_COMMIT, lock_parameters(claim_for, now))
                else:
                    raw.execute("SET LOCAL synchronous_commit = off")
                parameters = _completion_parameters(outcomes, now)
                completed = raw.execute(_COMPLETE, parameters, prepare=False)
                claims = [_claim(raw, request, now) for request in claim_for]
                prepaid = self._expects_rate_keys and bool(claim_for)
                if prepaid:
                    workers = [request.worker_id for request in claim_for]
                    tokens = raw.execute(
                        self._takes.take_claimed, take_claimed_parameters(workers, now)
                    )
                raw.commit()
            landed = _landed(outcomes, completed.fetchall())
            jobs = _claimed_jobs([row for claimed in claims for row in claimed.fetchall()])
            rate_keyed = any(job.rate_key is not None for job in jobs)
            if prepaid:
                taken = Counter(row[0] for row in tokens)
                jobs = _hand_back_untaken(raw, self._takes, jobs, now, taken)
            elif rate_keyed:
                jobs = _gated(raw, self._takes, jobs, now)
        except psycopg.Error as error:
            self._recover(raw, error)
            raise translated(error) from error
        if claim_for:
            self._local.expects_rate_keys = rate_keyed
        return landed, jobs

    @property
    def _expects_rate_keys(self) -> bool:
        """Whether this thread's last claim took jobs with a rate key: then the next one takes
        their tokens in its own pipeline (a claim without any sends nothing more)."""
        return bool(getattr(self._local, "expects_rate_keys", False))

    def _connection(self) -> psycopg.Connection[Any]:
        pooled = getattr(self._local, "pooled", None)
        if pooled is None:
            pooled = self._engine.raw_connection()
            self._local.pooled = pooled
        raw = pooled.driver_connection
        assert isinstance(raw, psycopg.Connection)
        return raw

    def _recover(self, raw: psycopg.Connection[Any], error: psycopg.Error) -> None:
        if _roll_back_or_drop(self._local.pooled, raw, error):
            self._local.pooled = None  # a broken connection: the next tick gets a fresh one


def _claim(
    raw: psycopg.Connection[Any], request: ClaimRequest, now: datetime
) -> psycopg.Cursor[Any]:
    # Rows in binary: the server sends each of a job's timestamps as its eight bytes instead of
    # formatting it as text, and psycopg reads them without parsing; the values are the same.
    return raw.execute(claim_statement(request), claim_parameters(request, now), binary=True)


def _gated(
    raw: psycopg.Connection[Any], takes: PostgresTakes, jobs: list[Job], now: datetime
) -> list[Job]:
    """The rate gate in a transaction of its own, right after the claim's: the claim was sent
    with its commit, in one round trip, before its rows were known. A job refused a token is
    `running` between the two commits (a round trip or two), which only makes a concurrent claim
    of its concurrency key more careful. Its commit is asynchronous, as the claim's (ADR 0005).
    Should this transaction fail, the claimed jobs are ones the worker does not know it holds:
    it hands them back, unspent, as after any claim whose outcome it did not see."""
    asynchronous = "SET LOCAL synchronous_commit = off"
    gated = gate(PostgresGate(raw, takes, prelude=asynchronous), jobs, now)
    raw.commit()
    return gated


def _hand_back_untaken(
    raw: psycopg.Connection[Any],
    takes: PostgresTakes,
    jobs: list[Job],
    now: datetime,
    taken: Counter[str],
) -> list[Job]:
    """After a claim that took its tokens in its own pipeline: the jobs of a key that got fewer
    tokens than it has jobs are handed back in a second transaction (a key without a limit got
    none, and its jobs are let through then, unless it is paused)."""
    wanted = Counter(job.rate_key for job in jobs if job.rate_key is not None)
    if all(taken[key] >= count for key, count in wanted.items()):
        return jobs
    gated = gate(PrepaidPostgresGate(raw, takes, dict(taken)), jobs, now)
    raw.commit()
    return gated


def _insert_parameters(jobs: Sequence[NewJob], now: datetime) -> dict[str, Any]:
    return {
        "now": now,
        "job_type": [job.job_type for job in jobs],
        "payload": [job.payload_json for job in jobs],
        "priority": [job.priority for job in jobs],
        "max_attempts": [job.max_attempts for job in jobs],
        "run_at": [job.run_at for job in jobs],
        "timeout_seconds": [job.timeout_seconds for job in jobs],
        "queue": [job.queue for job in jobs],
        "concurrency_key": [job.concurrency_key for job in jobs],
        "concurrency_limit": [job.concurrency_limit for job in jobs],
        "rate_key": [job.rate_key for job in jobs],
    }


def _autocommit(raw: psycopg.Connection[Any]) -> None:
    raw.autocommit = True


def _enqueue_one(raw: psycopg.Connection[Any], job: NewJob, now: datetime) -> list[int]:
    parameters = {
        "job_type": job.job_type,
        "payload": job.payload_json,
        "priority": job.priority,
        "max_attempts": job.max_attempts,
        "run_at": job.run_at,
        "now": now,
        "timeout_seconds": job.timeout_seconds,
        "queue": job.queue,
        "concurrency_key": job.concurrency_key,
        "concurrency_limit": job.concurrency_limit,
        "rate_key": job.rate_key,
        "counter": ENQUEUED,
        "shard": shard_for(),
        "channel": JOBS_CHANNEL,
        "due_at": due_payload(job.run_at),
    }
    (job_id,) = raw.execute(_ENQUEUE_ONE, parameters).fetchone() or (None,)
    assert job_id is not None  # the insert returns its row
    return [job_id]


def _copy_in(raw: psycopg.Connection[Any], jobs: Sequence[NewJob], now: datetime) -> list[int]:
    """A batch in one transaction: ids from the sequence, the rows by binary COPY, then the
    counters and the NOTIFY. Ids ascend in the batch's order, as the claim's tie-break expects."""
    increments = Increments().enqueued(job.job_type for job in jobs)
    with raw.transaction():
        ids = sorted(row[0] for row in raw.execute(_NEXT_IDS, {"count": len(jobs)}))
        with raw.cursor().copy(_COPY) as copy:
            copy.set_types(_COPY_TYPES)
            for job_id, job in zip(ids, jobs, strict=True):
                copy.write_row(
                    (
                        job_id,
                        job.job_type,
                        job.payload,  # the binary jsonb dumper encodes the document itself
                        "pending",
                        job.priority,
                        0,
                        job.max_attempts,
                        0,
                        job.run_at,
                        now,
                        now,
                        job.timeout_seconds,
                        job.queue,
                        job.concurrency_key,
                        job.concurrency_limit,
                        job.rate_key,
                    )
                )
        raw.execute(
            _COUNT_AND_NOTIFY,
            {
                **_metric_parameters(increments, shard_for()),
                "channel": JOBS_CHANNEL,
                "due_at": due_payload(min(job.run_at for job in jobs)),
            },
        )
    return ids


def _metric_parameters(increments: Increments, shard: int) -> dict[str, Any]:
    rows = increments.rows(shard)
    return {
        "names": [row[0] for row in rows],
        "types": [row[1] for row in rows],
        "buckets": [row[2] for row in rows],
        "shards": [row[3] for row in rows],
        "values": [row[4] for row in rows],
    }


def _roll_back_or_drop(pooled: Any, raw: psycopg.Connection[Any], error: psycopg.Error) -> bool:
    """After a failed transaction on a pooled driver connection: roll back, or, if the
    connection is broken, take it out of the pool (True)."""
    if not raw.closed and not isinstance(error, psycopg.OperationalError):
        try:
            raw.rollback()
        except psycopg.Error:
            pass
        else:
            return False
    pooled.invalidate()
    return True


def _completion_parameters(outcomes: Sequence[Completed], now: datetime) -> dict[str, Any]:
    # Every list as an array literal (`array_literals`): the settle's per-job cost on the loop.
    writer = outcomes[0].claim.worker_id if outcomes else None
    claims = [outcome.claim for outcome in outcomes]
    return {
        "now": now,
        "shard": shard_for(writer),
        "bounds": _BOUNDS,
        "labels": _LABELS,
        "seconds": number_array([outcome.duration_seconds for outcome in outcomes]),
        "pickup_bounds": _PICKUP_BOUNDS,
        "pickup_labels": _PICKUP_LABELS,
        "pickups": number_array([outcome.pickup_seconds for outcome in outcomes]),
        "ids": number_array([claim.job_id for claim in claims]),
        "workers": repeated_text_array([claim.worker_id for claim in claims]),
        "attempts": number_array([claim.attempt for claim in claims]),
        "results": _document_array([outcome.result for outcome in outcomes]),
        "progresses": _document_array([outcome.progress for outcome in outcomes]),
    }


def _document_array(documents: Sequence[Any]) -> str:
    """JSON documents (None: NULL) as a text array literal, cast to jsonb[] by the statement."""
    return text_array([None if value is None else json.dumps(value) for value in documents])


def _landed(outcomes: Sequence[Completed], rows: Sequence[Any]) -> list[bool]:
    landed = {row[0] for row in rows}
    return [outcome.claim.job_id in landed for outcome in outcomes]


def _claimed_jobs(rows: Sequence[Any]) -> list[Job]:
    # One tzinfo per result: psycopg loads every timestamp of it in the session's time zone,
    # which the engine sets to UTC (db/engine.py); only a session elsewhere needs `_utc`.
    if rows and rows[0][_RUN_AT].tzinfo is UTC:
        jobs = [_claimed_job(row) for row in rows]
    else:
        jobs = [job_from_fields(row, _utc, _as_read) for row in rows]
    # UPDATE ... RETURNING does not promise an order; hand jobs out in claim order.
    jobs.sort(key=lambda job: (-job.priority, job.run_at, job.id))
    return jobs


# A claimed row's values are the job's fields as they are: psycopg has decoded its timestamps
# (in UTC, see `_claimed_jobs`) and its JSON documents, and the payload comes as text
# (postgres_claims). The job equals `job_from_fields`'s, made without its per-column calls:
# on the loop thread, which claims every job, that mapping cost about a third of the loop's
# instructions per job at batch 100.
_CLAIMED_FIELD_NAMES = tuple(
    PAYLOAD_TEXT if name == "payload" else name for name in JOB_FIELD_NAMES
)
_RUN_AT = JOB_FIELD_NAMES.index("run_at")
_STATUS = JOB_FIELD_NAMES.index("status")


def _claimed_job(row: Sequence[Any]) -> Job:
    values = dict(zip(_CLAIMED_FIELD_NAMES, row, strict=True))
    values["status"] = job_status(row[_STATUS])
    return Job.from_fields(values)


def _utc(value: datetime | None) -> datetime | None:
    # The engine's sessions are in UTC (db/engine.py): psycopg's values are UTC already
    if value is None or value.tzinfo is UTC:
        return value
    return value.astimezone(UTC)


def _as_read(value: Any) -> Any:
    """psycopg has decoded the JSON documents already."""
    return value
