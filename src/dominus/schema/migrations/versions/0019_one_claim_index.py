"""one claim index: the claim of every queue walks the queue claim index too

Revision ID: 0019_one_claim_index
Revises: 0018_job_rate_key
Create Date: 2026-12-06

`ix_job_queue_claim (priority DESC, run_at, id)` is dropped: a worker that takes every queue now
finds the queues with pending jobs in `ix_job_queue_queue_claim (queue, priority DESC, run_at,
id)` and walks each queue's part of it, as a worker naming its queues always did (ADR 0061). Every
enqueue and every claim wrote an entry of both indexes; they now write one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019_one_claim_index"
down_revision = "0018_job_rate_key"
branch_labels = None
depends_on = None

UNKEYED_PENDING = sa.text("status = 'pending' AND concurrency_key IS NULL")


def upgrade() -> None:
    op.drop_index("ix_job_queue_claim", table_name="job_queue")


def downgrade() -> None:
    op.create_index(
        "ix_job_queue_claim",
        "job_queue",
        [sa.text("priority DESC"), "run_at", "id"],
        sqlite_where=UNKEYED_PENDING,
        postgresql_where=UNKEYED_PENDING,
    )
