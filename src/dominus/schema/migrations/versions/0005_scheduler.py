"""scheduler: schedules, their enqueued fires, and the schedulers' liveness

Revision ID: 0005_scheduler
Revises: 0004_pipeline
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from dominus.db.types import UTCDateTime

revision = "0005_scheduler"
down_revision = "0004_pipeline"
branch_labels = None
depends_on = None

# A frozen copy of the column type as it was at this revision.
DOCUMENT = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("cron", sa.String(200), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("job_type", sa.String(200), nullable=False),
        sa.Column("payload", DOCUMENT, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False, server_default=sa.text("true")),
        sa.Column("next_fire_at", UTCDateTime),
        sa.Column("last_fire_at", UTCDateTime),
        sa.Column("last_job_id", sa.BigInteger),
        sa.Column("skipped_count", sa.BigInteger, nullable=False, server_default=sa.text("0")),
        sa.Column("last_skipped_at", UTCDateTime),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_schedules"),
    )
    op.create_table(
        "schedule_fires",
        sa.Column("schedule_name", sa.String(100), nullable=False),
        sa.Column("fire_at", UTCDateTime, nullable=False),
        sa.Column("job_id", sa.BigInteger),
        sa.Column("catch_up", sa.Boolean, nullable=False),
        sa.Column("scheduler_id", sa.String(200), nullable=False),
        sa.Column("recorded_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("schedule_name", "fire_at", name="pk_schedule_fires"),
        sa.ForeignKeyConstraint(
            ["schedule_name"],
            ["schedules.name"],
            ondelete="CASCADE",
            name="fk_schedule_fires_schedule_name_schedules",
        ),
    )
    op.create_index("ix_schedule_fires_fire_at", "schedule_fires", ["fire_at"])
    op.create_table(
        "schedulers",
        sa.Column("id", sa.String(200), nullable=False),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("started_at", UTCDateTime, nullable=False),
        sa.Column("last_tick_at", UTCDateTime, nullable=False),
        sa.Column("stopped_at", UTCDateTime),
        sa.PrimaryKeyConstraint("id", name="pk_schedulers"),
    )


def downgrade() -> None:
    op.drop_table("schedulers")
    op.drop_index("ix_schedule_fires_fire_at", table_name="schedule_fires")
    op.drop_table("schedule_fires")
    op.drop_table("schedules")
