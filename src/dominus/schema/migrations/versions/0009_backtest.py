"""backtest: point-in-time snapshots of sold outcomes, weight tunes and calibrated thresholds

Revision ID: 0009_backtest
Revises: 0006_portfolio
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from dominus.db.types import UTCDateTime

revision = "0009_backtest"
down_revision = "0007_alerts_watchlist"
branch_labels = None
depends_on = None

# Frozen copies of the column types as they were at this revision.
DOCUMENT = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
IDENTIFIER = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "backtest_signals",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("outcome_id", IDENTIFIER, nullable=False),
        sa.Column("scoring_id", sa.BigInteger, nullable=False),
        sa.Column("run_id", sa.BigInteger, nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("sale_date", sa.Date, nullable=False),
        sa.Column("scored_at", UTCDateTime, nullable=False),
        sa.Column("realised_price", sa.Float, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("predicted_value", sa.Float, nullable=False),
        sa.Column("buy_max", sa.Float, nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("confidence_bucket", sa.String(8), nullable=False),
        sa.Column("weighted_score", sa.Float, nullable=False),
        sa.Column("intrinsic", sa.Float, nullable=False),
        sa.Column("commercial", sa.Float),
        sa.Column("market", sa.Float),
        sa.Column("expiry", sa.Float),
        sa.Column("recommended", sa.Boolean, nullable=False),
        sa.Column("absolute_error", sa.Float, nullable=False),
        sa.Column("signed_error", sa.Float, nullable=False),
        sa.Column("holding_cost", sa.Float),
        sa.Column("carrying_cost", sa.Float),
        sa.Column("baseline_value", sa.Float),
        sa.Column("baseline_sales", sa.Integer, nullable=False),
        sa.Column("inputs", DOCUMENT, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_backtest_signals"),
        sa.ForeignKeyConstraint(
            ["outcome_id"],
            ["outcomes.id"],
            ondelete="CASCADE",
            name="fk_backtest_signals_outcome_id_outcomes",
        ),
        sa.UniqueConstraint(
            "outcome_id", "scoring_id", name="uq_backtest_signals_outcome_id_scoring_id"
        ),
        sa.CheckConstraint(
            "confidence_bucket IN ('low', 'mid', 'high')",
            name="ck_backtest_signals_confidence_bucket",
        ),
    )
    op.create_index("ix_backtest_signals_sale_date", "backtest_signals", ["sale_date"])
    op.create_table(
        "weight_tunes",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("origin", sa.String(16), nullable=False),
        sa.Column("job_id", sa.BigInteger),
        sa.Column("sample_size", sa.Integer, nullable=False),
        sa.Column("dry_run", sa.Boolean, nullable=False),
        sa.Column("safety_passed", sa.Boolean, nullable=False),
        sa.Column("applied", sa.Boolean, nullable=False),
        sa.Column("decision", sa.Text, nullable=False),
        sa.Column("failures", DOCUMENT, nullable=False),
        sa.Column("checks", DOCUMENT, nullable=False),
        sa.Column("inputs", DOCUMENT, nullable=False),
        sa.Column("weights_before", DOCUMENT, nullable=False),
        sa.Column("weights_after", DOCUMENT, nullable=False),
        sa.Column("weight_set_id", sa.BigInteger),
        sa.PrimaryKeyConstraint("id", name="pk_weight_tunes"),
    )
    op.create_table(
        "threshold_sets",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("thresholds", DOCUMENT, nullable=False),
        sa.Column("source", sa.String(32), nullable=False),
        sa.Column("notes", sa.Text),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("activated_at", UTCDateTime),
        sa.PrimaryKeyConstraint("id", name="pk_threshold_sets"),
    )
    op.create_index("ix_threshold_sets_activated_at", "threshold_sets", ["activated_at"])


def downgrade() -> None:
    op.drop_index("ix_threshold_sets_activated_at", table_name="threshold_sets")
    op.drop_table("threshold_sets")
    op.drop_table("weight_tunes")
    op.drop_index("ix_backtest_signals_sale_date", table_name="backtest_signals")
    op.drop_table("backtest_signals")
