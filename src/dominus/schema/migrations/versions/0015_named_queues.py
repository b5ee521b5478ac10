"""named queues: a job's queue, the queues' pause state, and the index a queue's claim walks

Revision ID: 0015_named_queues
Revises: 0014_watchlist_drop_status
Create Date: 2026-12-07

Every existing job lands in the `default` queue (the server default), which is what every worker
took before this revision. `job_queues` holds a row only for a queue someone paused or resumed:
a queue without a row is running. The claim index of 0002 is kept unchanged for the claim of a
worker that takes every queue; the new one serves a worker that names its queues.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from dominus.db.types import UTCDateTime

revision = "0015_named_queues"
down_revision = "0014_watchlist_drop_status"
branch_labels = None
depends_on = None


PENDING = sa.text("status = 'pending'")


def upgrade() -> None:
    # A plain ADD COLUMN, not a batch: a batch rebuilds the SQLite table and its indexes from
    # reflection, which loses the DESC of the claim index (every claim would then sort every
    # pending row).
    op.add_column(
        "job_queue",
        sa.Column("queue", sa.String(64), nullable=False, server_default=sa.text("'default'")),
    )
    op.create_index(
        "ix_job_queue_queue_claim",
        "job_queue",
        ["queue", sa.text("priority DESC"), "run_at", "id"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )
    op.create_table(
        "job_queues",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("paused", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.Column("paused_at", UTCDateTime),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_job_queues"),
    )


def downgrade() -> None:
    op.drop_table("job_queues")
    op.drop_index("ix_job_queue_queue_claim", table_name="job_queue")
    with op.batch_alter_table("job_queue") as batch:
        batch.drop_column("queue")
    # The batch rebuilt the table on SQLite and lost the claim index's DESC: made again as 0001.
    op.drop_index("ix_job_queue_claim", table_name="job_queue")
    op.create_index(
        "ix_job_queue_claim",
        "job_queue",
        [sa.text("priority DESC"), "run_at", "id"],
        sqlite_where=PENDING,
        postgresql_where=PENDING,
    )
