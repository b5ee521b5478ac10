"""workers: which liveness lock a worker holds while it lives

Revision ID: 0011_worker_liveness
Revises: 0010_enqueue_count_mark
Create Date: 2026-12-04

A worker holds a lock that its death releases (a PostgreSQL session advisory lock, or an flock on
a file beside the SQLite database); its row says which, so that a reaper judges by the lock only
the workers that took one. Rows written before this revision (and by workers that could not take
the lock) have NULL: their jobs are reclaimed after the max running age, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_worker_liveness"
down_revision = "0010_enqueue_count_mark"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        batch.add_column(sa.Column("liveness_lock", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("workers") as batch:
        batch.drop_column("liveness_lock")
