"""portfolio auto-renew and registrar status: what the registrar's export says

Revision ID: 0013_portfolio_auto_renew
Revises: 0012_dashboard_sessions
Create Date: 2026-12-04

Two nullable columns on portfolio_entries, read from registrars' exports: `auto_renew` (NULL:
not known; a blank cell never overwrites a stored value) and `registrar_status` (the
registrar's word for the name, e.g. `Expired`; never a registry EPP status). Existing rows
keep NULL: nothing is guessed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_portfolio_auto_renew"
down_revision = "0012_dashboard_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("portfolio_entries") as batch:
        batch.add_column(sa.Column("auto_renew", sa.Boolean, nullable=True))
        batch.add_column(sa.Column("registrar_status", sa.String(100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("portfolio_entries") as batch:
        batch.drop_column("registrar_status")
        batch.drop_column("auto_renew")
