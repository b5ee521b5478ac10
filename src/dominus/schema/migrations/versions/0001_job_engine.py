"""job engine: job_queue, job_events, dead_letter_jobs, workers

Revision ID: 0001_job_engine
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from dominus.db.types import UTCDateTime

revision = "0001_job_engine"
down_revision = None
branch_labels = None
depends_on = None

# Frozen copies of the column types as they were at this revision; later migrations must not
# change what this one creates.
IDENTIFIER = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
PENDING = sa.text("status = 'pending'")
RUNNING = sa.text("status = 'running'")
ACTIVE_DEDUPE = sa.text("dedupe_key IS NOT NULL AND status IN ('pending', 'running')")


def upgrade() -> None:
    op.create_table(
        "job_queue",
        sa.Column("id", IDENTIFIER, primary_key=True, autoincrement=True),
        sa.Column("job_type", sa.String(200), nullable=False),
        sa.Column("payload", DOCUMENT, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("attempts", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("max_attempts", sa.Integer, nullable=False, server_default=sa.text("3")),
        sa.Column("failure_count", sa.Integer, nullable=False, server_default=sa.text("0")),
        sa.Column("run_at", UTCDateTime, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("started_at", UTCDateTime),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("heartbeat_at", UTCDateTime),
        sa.Column("cancel_requested_at", UTCDateTime),
        sa.Column("locked_by", sa.String(200)),
        sa.Column("result", DOCUMENT),
        sa.Column("last_error", sa.Text),
        sa.Column("progress", DOCUMENT),
        sa.Column("dedupe_key", sa.String(300)),
        sa.Column("timeout_seconds", sa.Float),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'completed', 'failed', 'cancelled')",
            name="ck_job_queue_status",
        ),
        sa.CheckConstraint("max_attempts >= 1", name="ck_job_queue_max_attempts"),
        sa.PrimaryKeyConstraint("id", name="pk_job_queue"),
    )
    op.create_index(
        "ix_job_queue_claim",
        "job_queue",
        [sa.text("priority DESC"), "run_at", "id"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )
    op.create_index(
        "ix_job_queue_running",
        "job_queue",
        ["locked_by", "heartbeat_at"],
        sqlite_where=RUNNING,
        postgresql_where=RUNNING,
    )
    op.create_index(
        "ux_job_queue_dedupe_key",
        "job_queue",
        ["dedupe_key"],
        unique=True,
        sqlite_where=ACTIVE_DEDUPE,
        postgresql_where=ACTIVE_DEDUPE,
    )
    op.create_index("ix_job_queue_status_job_type", "job_queue", ["status", "job_type"])

    op.create_table(
        "job_events",
        sa.Column("id", IDENTIFIER, primary_key=True, autoincrement=True),
        sa.Column("job_id", IDENTIFIER, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.Column("attempt", sa.Integer),
        sa.Column("worker_id", sa.String(200)),
        sa.Column("message", sa.Text),
        sa.Column("details", DOCUMENT),
        sa.PrimaryKeyConstraint("id", name="pk_job_events"),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["job_queue.id"],
            name="fk_job_events_job_id_job_queue",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_job_events_job_id", "job_events", ["job_id", "id"])

    op.create_table(
        "dead_letter_jobs",
        sa.Column("id", IDENTIFIER, primary_key=True, autoincrement=True),
        sa.Column("job_id", IDENTIFIER, nullable=False),
        sa.Column("job_type", sa.String(200), nullable=False),
        sa.Column("payload", DOCUMENT, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("errors", DOCUMENT, nullable=False),
        sa.Column("last_error", sa.Text),
        sa.Column("failed_at", UTCDateTime, nullable=False),
        sa.Column("requeued_at", UTCDateTime),
        sa.PrimaryKeyConstraint("id", name="pk_dead_letter_jobs"),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["job_queue.id"],
            name="fk_dead_letter_jobs_job_id_job_queue",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_dead_letter_jobs_job_id", "dead_letter_jobs", ["job_id"])
    op.create_index("ix_dead_letter_jobs_failed_at", "dead_letter_jobs", ["failed_at"])

    op.create_table(
        "workers",
        sa.Column("id", sa.String(200), nullable=False),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("job_types", DOCUMENT, nullable=False),
        sa.Column("started_at", UTCDateTime, nullable=False),
        sa.Column("last_seen_at", UTCDateTime, nullable=False),
        sa.Column("stopped_at", UTCDateTime),
        sa.PrimaryKeyConstraint("id", name="pk_workers"),
    )


def downgrade() -> None:
    op.drop_table("workers")
    op.drop_table("dead_letter_jobs")
    op.drop_table("job_events")
    op.drop_table("job_queue")
