"""The job engine's tables, as SQLAlchemy Core objects: the queue, its events and dead letters,
metrics, workers and the scheduler's. `dominus.jobs` reads and writes these only, so it needs
nothing of the domain.

The domain's tables (`dominus.schema.tables`) are defined on the same `metadata`: one database, one
Alembic history (ADR 0031). The newest migration and these definitions must agree, which
`tests/integration/test_migrations.py` checks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB

from dominus.db.types import UTCDateTime

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

# BIGINT on PostgreSQL, INTEGER PRIMARY KEY (the rowid alias) on SQLite.
Identifier = BigInteger().with_variant(Integer(), "sqlite")
# The largest Identifier: a larger number names no row (and would overflow the driver).
MAX_ID = 2**63 - 1
# SQL NULL (not the JSON text 'null') for Python None, on both backends.
Document = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")

job_queue = Table(
    "job_queue",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("job_type", String(200), nullable=False),
    Column("payload", Document, nullable=False),
    Column("status", String(16), nullable=False),
    Column("priority", Integer, nullable=False, server_default=text("0")),
    Column("attempts", Integer, nullable=False, server_default=text("0")),
    Column("max_attempts", Integer, nullable=False, server_default=text("3")),
    # Failed attempts over the job's whole life; unlike `attempts` it survives a DLQ requeue.
    Column("failure_count", Integer, nullable=False, server_default=text("0")),
    Column("run_at", UTCDateTime, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("started_at", UTCDateTime),
    Column("finished_at", UTCDateTime),
    Column("heartbeat_at", UTCDateTime),
    Column("cancel_requested_at", UTCDateTime),
    Column("locked_by", String(200)),
    Column("result", Document),
    Column("last_error", Text),
    Column("progress", Document),
    Column("dedupe_key", String(300)),
    Column("timeout_seconds", Float),
    # The named queue it waits in (migration 0015); a worker may take some queues only.
    Column("queue", String(64), nullable=False, server_default=text("'default'")),
    # Its concurrency key and that key's limit at enqueue (migration 0016, ADR 0052): at most
    # that many jobs with the key run at once. Both NULL for a job without a key.
    Column("concurrency_key", String(200)),
    Column("concurrency_limit", Integer),
    # The rate limiter each claim takes a token from (migration 0018, ADR 0053); NULL: none.
    Column("rate_key", String(200)),
    # Comparisons, not `status IN (...)`: SQLite builds a temporary b-tree for an IN list of
    # more than two constants for every row written (migration 0020, ADR 0065).
    CheckConstraint(
        "status = 'pending' OR status = 'running' OR status = 'completed' "
        "OR status = 'failed' OR status = 'cancelled'",
        name="status",
    ),
    CheckConstraint("max_attempts >= 1", name="max_attempts"),
)

# The pending jobs without a concurrency key, and those with one: the claim walks the first kind
# in the claim indexes and the second in the key claim index, so that a key holding thousands of
# jobs back is never walked through by the claim of the others (ADR 0052).
UNKEYED_PENDING = text("status = 'pending' AND concurrency_key IS NULL")
KEYED_PENDING = text("status = 'pending' AND concurrency_key IS NOT NULL")
KEYED_RUNNING = text("status = 'running' AND concurrency_key IS NOT NULL")
RATE_KEYED_PENDING = text("status = 'pending' AND rate_key IS NOT NULL")
# A `snoozed` event's detail naming the rate-limit key whose pause the job waits out.
SNOOZED_FOR_KEY = "rate_key"

# The claim walks this index one queue at a time, in claim order, and stops after LIMIT rows;
# finished jobs are not in it, so a table full of history does not slow claiming down. A worker
# that takes every queue finds the queues with pending jobs in it too (ADR 0061).
Index(
    "ix_job_queue_queue_claim",
    job_queue.c.queue,
    job_queue.c.priority.desc(),
    job_queue.c.run_at,
    job_queue.c.id,
    sqlite_where=UNKEYED_PENDING,
    postgresql_where=UNKEYED_PENDING,
)
# A key's pending jobs in claim order: the keyed claim walks each key's part, stopping after its
# free slots, and finds the next key with one probe (ADR 0052).
Index(
    "ix_job_queue_key_claim",
    job_queue.c.concurrency_key,
    job_queue.c.priority.desc(),
    job_queue.c.run_at,
    job_queue.c.id,
    sqlite_where=KEYED_PENDING,
    postgresql_where=KEYED_PENDING,
)
# A key's running jobs (claimed ahead included): what its slots are counted from.
Index(
    "ix_job_queue_key_running",
    job_queue.c.concurrency_key,
    job_queue.c.concurrency_limit,
    sqlite_where=KEYED_RUNNING,
    postgresql_where=KEYED_RUNNING,
)
# A rate key's pending jobs: what `keys resume` brings forward (ADR 0053). Empty while no job
# names a rate key.
Index(
    "ix_job_queue_rate_key",
    job_queue.c.rate_key,
    sqlite_where=RATE_KEYED_PENDING,
    postgresql_where=RATE_KEYED_PENDING,
)
Index(
    "ix_job_queue_running",
    job_queue.c.locked_by,
    job_queue.c.heartbeat_at,
    sqlite_where=job_queue.c.status == "running",
    postgresql_where=job_queue.c.status == "running",
)
# Dedupe is enforced by the database: one active (pending or running) job per key.
Index(
    "ux_job_queue_dedupe_key",
    job_queue.c.dedupe_key,
    unique=True,
    sqlite_where=text("dedupe_key IS NOT NULL AND status IN ('pending', 'running')"),
    postgresql_where=text("dedupe_key IS NOT NULL AND status IN ('pending', 'running')"),
)


@dataclass(frozen=True)
class NewJobColumn:
    name: str
    pg_type: str  # its PostgreSQL type: binary COPY and array parameters need it
    fixed: str | int | None = None  # what every new job starts with; None: the job's own value


# A new job's row, in one order. Every way a job is inserted (SQLAlchemy's statement, SQLite's
# and PostgreSQL's own statements, PostgreSQL's COPY) spells its columns from this, so they
# cannot drift apart. `created_at` and `updated_at` are both the enqueue time.
NEW_JOB_COLUMNS = (
    NewJobColumn("job_type", "varchar"),
    NewJobColumn("payload", "jsonb"),
    NewJobColumn("status", "varchar", "pending"),
    NewJobColumn("priority", "int4"),
    NewJobColumn("attempts", "int4", 0),
    NewJobColumn("max_attempts", "int4"),
    NewJobColumn("failure_count", "int4", 0),
    NewJobColumn("run_at", "timestamptz"),
    NewJobColumn("created_at", "timestamptz"),
    NewJobColumn("updated_at", "timestamptz"),
    NewJobColumn("timeout_seconds", "float8"),
    NewJobColumn("queue", "varchar"),
    NewJobColumn("concurrency_key", "varchar"),
    NewJobColumn("concurrency_limit", "int4"),
    NewJobColumn("rate_key", "varchar"),
)
NEW_JOB_COLUMN_LIST = ", ".join(column.name for column in NEW_JOB_COLUMNS)
ENQUEUE_TIME_COLUMNS = frozenset({"created_at", "updated_at"})
# The columns whose values come from the job itself (the rest are fixed or the enqueue time).
JOB_VALUE_COLUMNS = tuple(
    column
    for column in NEW_JOB_COLUMNS
    if column.fixed is None and column.name not in ENQUEUE_TIME_COLUMNS
)


def new_job_values(placeholder: Callable[[NewJobColumn], str]) -> str:
    """The VALUES (or SELECT) list of a new job: each fixed value as an SQL literal, each other
    column as `placeholder(column)` gives it."""
    return ", ".join(
        placeholder(column) if column.fixed is None else _literal(column.fixed)
        for column in NEW_JOB_COLUMNS
    )


def _literal(value: str | int) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


job_events = Table(
    "job_events",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("job_id", Identifier, ForeignKey("job_queue.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("attempt", Integer),
    Column("worker_id", String(200)),
    Column("message", Text),
    Column("details", Document),
)
Index("ix_job_events_job_id", job_events.c.job_id, job_events.c.id)

dead_letter_jobs = Table(
    "dead_letter_jobs",
    metadata,
    Column("id", Identifier, primary_key=True, autoincrement=True),
    Column("job_id", Identifier, ForeignKey("job_queue.id", ondelete="CASCADE"), nullable=False),
    Column("job_type", String(200), nullable=False),
    Column("payload", Document, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("errors", Document, nullable=False),
    Column("last_error", Text),
    Column("failed_at", UTCDateTime, nullable=False),
    Column("requeued_at", UTCDateTime),
)
Index("ix_dead_letter_jobs_job_id", dead_letter_jobs.c.job_id)
Index("ix_dead_letter_jobs_failed_at", dead_letter_jobs.c.failed_at)

# Monotonic counters and histogram buckets, sharded (see migration 0003). `bucket` is the
# histogram bucket's upper bound ("+Inf" for the last) or "" for plain counters.
job_metrics = Table(
    "job_metrics",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("job_type", String(200), primary_key=True),
    Column("bucket", String(16), primary_key=True),
    Column("shard", SmallInteger, primary_key=True),
    Column("value", Float, nullable=False),
)

workers = Table(
    "workers",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("hostname", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("concurrency", Integer, nullable=False),
    Column("job_types", Document, nullable=False),
    Column("started_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("stopped_at", UTCDateTime),
    # The lock its death releases ("advisory" or "flock", `dominus.jobs.liveness`), or NULL.
    Column("liveness_lock", String(16)),
)

# A named queue's state (migration 0015). A queue has a row once someone paused or resumed it;
# no row: running. Every claim reads it in its own statement, so a pause holds on every host
# from its commit on, with nothing cached by the workers.
job_queues = Table(
    "job_queues",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("paused", Boolean, nullable=False, server_default=text("false")),
    Column("paused_at", UTCDateTime),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Rate limiters shared by every process (migration 0017, ADR 0053). A key has a row once it was
# configured or paused. `limit_count`/`period_us` NULL: no limit, only pauses. `paused_until`
# in the past means not paused.
rate_limits = Table(
    "rate_limits",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("limit_count", Integer),
    Column("period_us", BigInteger),
    Column("paused_until", UTCDateTime),
    Column("pause_reason", String(500)),
    Column("updated_at", UTCDateTime, nullable=False),
    CheckConstraint(
        "(limit_count IS NULL AND period_us IS NULL) OR (limit_count >= 1 AND period_us >= 1)",
        name="limit",
    ),
)

# The sliding-window log: one row per slot of a key's limit, holding the time of the grant it
# last gave (microseconds since the epoch; 0: never). A grant takes the oldest slot, and only
# when that one is a whole period old, so the slots are always the key's `limit_count` latest
# grants and no window of the period ever holds more (ADR 0053).
rate_limit_grants = Table(
    "rate_limit_grants",
    metadata,
    Column(
        "key",
        String(200),
        ForeignKey("rate_limits.key", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("slot", Integer, primary_key=True),
    Column("granted_us", BigInteger, nullable=False),
)
Index(
    "ix_rate_limit_grants_key_granted_us", rate_limit_grants.c.key, rate_limit_grants.c.granted_us
)

# --- the scheduler (migration 0005) -----------------------------------------------------------
# A schedule's row: the configuration its last scheduler started with, the user's enabled flag
# (which survives restarts), and the fire cursor every scheduler advances with a compare-and-set.
schedules = Table(
    "schedules",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("cron", String(200), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("job_type", String(200), nullable=False),
    Column("payload", Document, nullable=False),
    Column("enabled", Boolean, nullable=False, server_default=text("true")),
    # The earliest fire no scheduler has handled yet; NULL while disabled.
    Column("next_fire_at", UTCDateTime),
    Column("last_fire_at", UTCDateTime),
    # No foreign key: finished jobs are pruned, schedules are kept.
    Column("last_job_id", BigInteger),
    Column("skipped_count", BigInteger, nullable=False, server_default=text("0")),
    Column("last_skipped_at", UTCDateTime),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# One row per enqueued fire. Its primary key is what makes a fire enqueue one job however many
# schedulers race on it, and keeps it so after the job has finished (the job_queue dedupe index
# covers active jobs only). Rows older than the fire retention are pruned (ADR 0019).
schedule_fires = Table(
    "schedule_fires",
    metadata,
    Column(
        "schedule_name",
        String(100),
        ForeignKey("schedules.name", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("fire_at", UTCDateTime, primary_key=True),
    Column("job_id", BigInteger),
    Column("catch_up", Boolean, nullable=False),
    Column("scheduler_id", String(200), nullable=False),
    Column("recorded_at", UTCDateTime, nullable=False),
)
Index("ix_schedule_fires_fire_at", schedule_fires.c.fire_at)

schedulers = Table(
    "schedulers",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("hostname", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("started_at", UTCDateTime, nullable=False),
    Column("last_tick_at", UTCDateTime, nullable=False),
    Column("stopped_at", UTCDateTime),
)

# Every table of the engine, parents first (as `metadata.create_all(tables=...)` wants them).
ENGINE_TABLES = (
    job_queue,
    job_events,
    dead_letter_jobs,
    job_metrics,
    workers,
    job_queues,
    rate_limits,
    rate_limit_grants,
    schedules,
    schedule_fires,
    schedulers,
)
