"""portfolio: entries, their verdict history, and outcomes (sales and drops)

Revision ID: 0006_portfolio
Revises: 0005_scheduler
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from dominus.db.types import UTCDateTime

revision = "0006_portfolio"
down_revision = "0005_scheduler"
branch_labels = None
depends_on = None

# Frozen copies of the column types as they were at this revision.
DOCUMENT = sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
IDENTIFIER = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "portfolio_entries",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("tld", sa.String(63), nullable=False),
        sa.Column("acquired_at", sa.Date),
        sa.Column("renewal_date", sa.Date, nullable=False),
        sa.Column("acquisition_cost", sa.Float),
        sa.Column("renewal_cost", sa.Float),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("registrar", sa.String(200)),
        sa.Column("current_score", sa.Float),
        sa.Column("expected_value", sa.Float),
        sa.Column("confidence", sa.Float),
        sa.Column("suggested_list_price", sa.Float),
        sa.Column("list_price", sa.Float),
        sa.Column("score_details", DOCUMENT),
        sa.Column("verdict", sa.String(16)),
        sa.Column("verdict_reason", sa.Text),
        sa.Column("verdict_at", UTCDateTime),
        sa.Column("scored_at", UTCDateTime),
        sa.Column("notes", sa.Text),
        sa.Column("status", sa.String(16), nullable=False, server_default=sa.text("'active'")),
        sa.Column("renewals_paid", sa.Float, nullable=False, server_default=sa.text("0")),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_portfolio_entries"),
        sa.UniqueConstraint("domain", name="uq_portfolio_entries_domain"),
        sa.CheckConstraint(
            "status IN ('active', 'sold', 'dropped')", name="ck_portfolio_entries_status"
        ),
        sa.CheckConstraint(
            "verdict IN ('keep', 'drop', 'reprice')", name="ck_portfolio_entries_verdict"
        ),
        sa.CheckConstraint(
            "current_score >= 0 AND current_score <= 100",
            name="ck_portfolio_entries_current_score",
        ),
    )
    op.create_index("ix_portfolio_entries_renewal_date", "portfolio_entries", ["renewal_date"])
    op.create_table(
        "portfolio_verdict_history",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("entry_id", IDENTIFIER, nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("old_verdict", sa.String(16)),
        sa.Column("new_verdict", sa.String(16)),
        sa.Column("method", sa.String(16)),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_portfolio_verdict_history"),
        sa.ForeignKeyConstraint(
            ["entry_id"],
            ["portfolio_entries.id"],
            ondelete="CASCADE",
            name="fk_portfolio_verdict_history_entry_id_portfolio_entries",
        ),
        sa.CheckConstraint(
            "kind IN ('verdict', 'sold', 'dropped')", name="ck_portfolio_verdict_history_kind"
        ),
    )
    op.create_index(
        "ix_portfolio_verdict_history_entry_id",
        "portfolio_verdict_history",
        ["entry_id", "id"],
    )
    op.create_table(
        "outcomes",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("sale_price", sa.Float),
        sa.Column("currency", sa.String(3)),
        sa.Column("date", sa.Date, nullable=False),
        sa.Column("venue", sa.String(200)),
        sa.Column("fees", sa.Float),
        sa.Column("cost_basis", sa.Float),
        sa.Column("notes", sa.Text),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_outcomes"),
        sa.CheckConstraint("type IN ('sold', 'dropped', 'expired')", name="ck_outcomes_type"),
    )
    op.create_index("ix_outcomes_domain", "outcomes", ["domain"])
    op.create_index("ix_outcomes_date", "outcomes", ["date"])


def downgrade() -> None:
    op.drop_index("ix_outcomes_date", table_name="outcomes")
    op.drop_index("ix_outcomes_domain", table_name="outcomes")
    op.drop_table("outcomes")
    op.drop_index("ix_portfolio_verdict_history_entry_id", table_name="portfolio_verdict_history")
    op.drop_table("portfolio_verdict_history")
    op.drop_index("ix_portfolio_entries_renewal_date", table_name="portfolio_entries")
    op.drop_table("portfolio_entries")
