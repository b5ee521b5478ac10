"""job rate key: the rate limiter each claim of a job takes a token from

Revision ID: 0018_job_rate_key
Revises: 0017_rate_limits
Create Date: 2026-12-06

Every existing job has none (NULL): nothing changes for it. `ix_job_queue_rate_key` holds only
the pending jobs that name a rate key: `keys resume` brings them forward through it (ADR 0053).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_job_rate_key"
down_revision = "0017_rate_limits"
branch_labels = None
depends_on = None

RATE_KEYED_PENDING = sa.text("status = 'pending' AND rate_key IS NOT NULL")


def upgrade() -> None:
    # A plain ADD COLUMN, not a batch: a batch rebuilds the SQLite table and its indexes from
    # reflection, which loses the DESC of the claim index (ADR 0050).
    op.add_column("job_queue", sa.Column("rate_key", sa.String(200)))
    op.create_index(
        "ix_job_queue_rate_key",
        "job_queue",
        ["rate_key"],
        sqlite_where=RATE_KEYED_PENDING,
        postgresql_where=RATE_KEYED_PENDING,
    )


def downgrade() -> None:
    op.drop_index("ix_job_queue_rate_key", table_name="job_queue")
    # ALTER TABLE ... DROP COLUMN on both databases (SQLite 3.35+): a batch would rebuild the
    # table and lose the claim index's DESC.
    op.drop_column("job_queue", "rate_key")
