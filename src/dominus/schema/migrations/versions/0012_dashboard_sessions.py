"""dashboard sessions: the session generation that logging out moves on

Revision ID: 0012_dashboard_sessions
Revises: 0011_worker_liveness
Create Date: 2026-12-05

One row (id 1, created by the first logout): a dashboard session cookie is valid only while it
carries the current generation. No row is written here, so a `db copy` into a database migrated
to this revision finds the table empty.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_dashboard_sessions"
down_revision = "0011_worker_liveness"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dashboard_session_generation",
        sa.Column("id", sa.SmallInteger, autoincrement=False, nullable=False),
        sa.Column("generation", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_dashboard_session_generation"),
        sa.CheckConstraint("id = 1", name="ck_dashboard_session_generation_single_row"),
    )


def downgrade() -> None:
    op.drop_table("dashboard_session_generation")
