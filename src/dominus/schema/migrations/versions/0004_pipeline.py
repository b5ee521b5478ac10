"""pipeline: runs, their checkpoints, candidates, per-candidate scores, weight sets

Revision ID: 0004_pipeline
Revises: 0003_job_metrics
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from dominus.db.types import UTCDateTime

revision = "0004_pipeline"
down_revision = "0003_job_metrics"
branch_labels = None
depends_on = None

# Frozen copies of the column types as they were at this revision.
IDENTIFIER = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
DOCUMENT = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")


def upgrade() -> None:
    op.create_table(
        "weight_sets",
        sa.Column("id", IDENTIFIER, autoincrement=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("weights", DOCUMENT, nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("notes", sa.Text),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("activated_at", UTCDateTime),
        sa.PrimaryKeyConstraint("id", name="pk_weight_sets"),
    )
    op.create_index("ix_weight_sets_activated_at", "weight_sets", ["activated_at"])
    op.create_table(
        "pipeline_runs",
        sa.Column("id", IDENTIFIER, autoincrement=True),
        sa.Column("job_id", sa.BigInteger),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("input", DOCUMENT, nullable=False),
        sa.Column("providers", sa.String(32), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("started_at", UTCDateTime),
        sa.Column("finished_at", UTCDateTime),
        sa.Column("stages", DOCUMENT, nullable=False),
        sa.Column("summary", DOCUMENT),
        sa.Column("degraded", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("degraded_reasons", DOCUMENT, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("weight_set_id", sa.BigInteger),
        sa.Column("weights", DOCUMENT),
        sa.PrimaryKeyConstraint("id", name="pk_pipeline_runs"),
        sa.CheckConstraint(
            "status IN ('pending', 'running', 'completed', 'failed', 'cancelled')",
            name="ck_pipeline_runs_status",
        ),
    )
    op.create_index("ix_pipeline_runs_job_id", "pipeline_runs", ["job_id"])
    op.create_table(
        "pipeline_checkpoints",
        sa.Column("run_id", IDENTIFIER, nullable=False),
        sa.Column("stage", sa.String(32), nullable=False),
        sa.Column("data", DOCUMENT, nullable=False),
        sa.Column("saved_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "stage", name="pk_pipeline_checkpoints"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["pipeline_runs.id"],
            ondelete="CASCADE",
            name="fk_pipeline_checkpoints_run_id_pipeline_runs",
        ),
    )
    op.create_table(
        "candidates",
        sa.Column("id", IDENTIFIER, autoincrement=True),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("unicode_domain", sa.String(253), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("availability", sa.String(16)),
        sa.Column("availability_detail", sa.Text),
        sa.Column("registered_at", sa.Date),
        sa.Column("expires_at", sa.Date),
        sa.Column("first_seen_at", UTCDateTime, nullable=False),
        sa.Column("last_seen_at", UTCDateTime, nullable=False),
        sa.Column("last_run_id", sa.BigInteger),
        sa.PrimaryKeyConstraint("id", name="pk_candidates"),
        sa.UniqueConstraint("domain", name="uq_candidates_domain"),
    )
    op.create_table(
        "scoring_runs",
        sa.Column("id", IDENTIFIER, autoincrement=True),
        sa.Column("run_id", IDENTIFIER, nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("intrinsic", sa.Float, nullable=False),
        sa.Column("commercial", sa.Float),
        sa.Column("market", sa.Float),
        sa.Column("expiry", sa.Float),
        sa.Column("weighted_score", sa.Float, nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("expected_value", sa.Float, nullable=False),
        sa.Column("suggested_buy_max", sa.Float, nullable=False),
        sa.Column("suggested_list_price", sa.Float, nullable=False),
        sa.Column("recommended", sa.Boolean, nullable=False),
        sa.Column("trademark_verdict", sa.String(16), nullable=False),
        sa.Column("trademark_mark", sa.String(200)),
        sa.Column("details", DOCUMENT, nullable=False),
        sa.Column("scored_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_scoring_runs"),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["pipeline_runs.id"],
            ondelete="CASCADE",
            name="fk_scoring_runs_run_id_pipeline_runs",
        ),
        sa.UniqueConstraint("run_id", "domain", name="uq_scoring_runs_run_id_domain"),
    )
    op.create_index("ix_scoring_runs_domain", "scoring_runs", ["domain"])


def downgrade() -> None:
    for table in ("scoring_runs", "candidates", "pipeline_checkpoints", "pipeline_runs"):
        op.drop_table(table)
    op.drop_table("weight_sets")
