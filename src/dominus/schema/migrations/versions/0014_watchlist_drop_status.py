"""watchlist drop status: the registry's statuses and dates, the drop phase and its estimate

Revision ID: 0014_watchlist_drop_status
Revises: 0013_portfolio_auto_renew
Create Date: 2026-12-06

Columns only, all nullable: existing entries read as "no RDAP status seen yet" and fill in at
their next poll.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from dominus.db.types import UTCDateTime

revision = "0014_watchlist_drop_status"
down_revision = "0013_portfolio_auto_renew"
branch_labels = None
depends_on = None

# A frozen copy of the phases as they were at this revision.
PHASES = "('none', 'auto_renew_period', 'redemption_period', 'pending_restore', 'pending_delete')"


def upgrade() -> None:
    with op.batch_alter_table("watchlist_entries") as batch:
        batch.add_column(sa.Column("rdap_statuses", sa.Text))
        batch.add_column(sa.Column("rdap_expires_on", sa.Date))
        batch.add_column(sa.Column("rdap_last_changed_on", sa.Date))
        batch.add_column(sa.Column("drop_phase", sa.String(24)))
        batch.add_column(sa.Column("drop_phase_since", UTCDateTime))
        batch.add_column(sa.Column("expected_drop_on", sa.Date))
        batch.add_column(sa.Column("drop_estimate", sa.Text))
        batch.add_column(sa.Column("drop_notified_phase", sa.String(24)))
        batch.add_column(sa.Column("drop_notified_at", UTCDateTime))
        batch.create_check_constraint("drop_phase", f"drop_phase IN {PHASES}")
        batch.create_check_constraint("drop_notified_phase", f"drop_notified_phase IN {PHASES}")


def downgrade() -> None:
    with op.batch_alter_table("watchlist_entries") as batch:
        batch.drop_constraint("drop_notified_phase", type_="check")
        batch.drop_constraint("drop_phase", type_="check")
        for column in (
            "drop_notified_at",
            "drop_notified_phase",
            "drop_estimate",
            "expected_drop_on",
            "drop_phase_since",
            "drop_phase",
            "rdap_last_changed_on",
            "rdap_expires_on",
            "rdap_statuses",
        ):
            batch.drop_column(column)
