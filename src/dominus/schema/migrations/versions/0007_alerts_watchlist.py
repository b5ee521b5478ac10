"""alerts and watchlist: watched domains and renewal alerts

Revision ID: 0007_alerts_watchlist
Revises: 0006_portfolio
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from dominus.db.types import UTCDateTime

revision = "0007_alerts_watchlist"
down_revision = "0006_portfolio"
branch_labels = None
depends_on = None

# A frozen copy of the column type as it was at this revision.
IDENTIFIER = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "watchlist_entries",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("notes", sa.Text),
        sa.Column("last_checked_at", UTCDateTime),
        sa.Column("last_status", sa.String(16)),
        sa.Column("last_detail", sa.Text),
        sa.Column("last_status_change_at", UTCDateTime),
        sa.Column("notified", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("notified_at", UTCDateTime),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_watchlist_entries"),
        sa.UniqueConstraint("domain", name="uq_watchlist_entries_domain"),
        sa.CheckConstraint(
            "last_status IN ('available', 'registered', 'unknown')",
            name="ck_watchlist_entries_last_status",
        ),
    )
    op.create_index(
        "ix_watchlist_entries_last_checked_at", "watchlist_entries", ["last_checked_at"]
    )
    op.create_table(
        "renewal_alerts",
        sa.Column("id", IDENTIFIER, autoincrement=True, nullable=False),
        sa.Column("entry_id", IDENTIFIER, nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("renewal_date", sa.Date, nullable=False),
        sa.Column("days_left", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("escalated_at", UTCDateTime),
        sa.Column("acknowledged_at", UTCDateTime),
        sa.Column("notified_at", UTCDateTime),
        sa.Column("resolved_at", UTCDateTime),
        sa.PrimaryKeyConstraint("id", name="pk_renewal_alerts"),
        sa.ForeignKeyConstraint(
            ["entry_id"],
            ["portfolio_entries.id"],
            ondelete="CASCADE",
            name="fk_renewal_alerts_entry_id_portfolio_entries",
        ),
        sa.UniqueConstraint("domain", "type", name="uq_renewal_alerts_domain_type"),
        sa.CheckConstraint(
            "type IN ('past_due', 'critical', 'imminent')", name="ck_renewal_alerts_type"
        ),
        sa.CheckConstraint(
            "severity IN ('critical', 'warning')", name="ck_renewal_alerts_severity"
        ),
    )
    op.create_index("ix_renewal_alerts_entry_id", "renewal_alerts", ["entry_id"])


def downgrade() -> None:
    op.drop_index("ix_renewal_alerts_entry_id", table_name="renewal_alerts")
    op.drop_table("renewal_alerts")
    op.drop_index("ix_watchlist_entries_last_checked_at", table_name="watchlist_entries")
    op.drop_table("watchlist_entries")
