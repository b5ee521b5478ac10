"""concurrency keys: a job's key and limit, and the indexes the keyed claim walks

Revision ID: 0016_concurrency_keys
Revises: 0015_named_queues
Create Date: 2026-12-05

Every existing job has no key (both columns NULL): nothing changes for it. The two claim indexes
are made again without the keyed jobs (`concurrency_key IS NULL` joins their predicate), so that
the claim of jobs without a key never walks through a key's held-back jobs; those are walked per
key in `ix_job_queue_key_claim` (ADR 0052).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_concurrency_keys"
down_revision = "0015_named_queues"
branch_labels = None
depends_on = None

PENDING = sa.text("status = 'pending'")
UNKEYED_PENDING = sa.text("status = 'pending' AND concurrency_key IS NULL")
KEYED_PENDING = sa.text("status = 'pending' AND concurrency_key IS NOT NULL")
KEYED_RUNNING = sa.text("status = 'running' AND concurrency_key IS NOT NULL")
CLAIM_ORDER: list[str | sa.TextClause] = [sa.text("priority DESC"), "run_at", "id"]


def upgrade() -> None:
    # Plain ADD COLUMNs, not a batch: a batch rebuilds the SQLite table and its indexes from
    # reflection, which loses the DESC of the claim index (ADR 0050).
    op.add_column("job_queue", sa.Column("concurrency_key", sa.String(200)))
    op.add_column("job_queue", sa.Column("concurrency_limit", sa.Integer))
    _drop_claim_indexes()
    _create_claim_indexes(UNKEYED_PENDING)
    op.create_index(
        "ix_job_queue_key_claim",
        "job_queue",
        ["concurrency_key", *CLAIM_ORDER],
        sqlite_where=KEYED_PENDING,
        postgresql_where=KEYED_PENDING,
    )
    op.create_index(
        "ix_job_queue_key_running",
        "job_queue",
        ["concurrency_key", "concurrency_limit"],
        sqlite_where=KEYED_RUNNING,
        postgresql_where=KEYED_RUNNING,
    )


def downgrade() -> None:
    op.drop_index("ix_job_queue_key_running", table_name="job_queue")
    op.drop_index("ix_job_queue_key_claim", table_name="job_queue")
    _drop_claim_indexes()
    with op.batch_alter_table("job_queue") as batch:
        batch.drop_column("concurrency_limit")
        batch.drop_column("concurrency_key")
    # The batch rebuilt the table on SQLite and lost the DESC of both claim indexes: made again.
    _create_claim_indexes(PENDING)


def _drop_claim_indexes() -> None:
    op.drop_index("ix_job_queue_queue_claim", table_name="job_queue")
    op.drop_index("ix_job_queue_claim", table_name="job_queue")


def _create_claim_indexes(where: sa.TextClause) -> None:
    op.create_index(
        "ix_job_queue_claim",
        "job_queue",
        CLAIM_ORDER,
        sqlite_where=where,
        postgresql_where=where,
    )
    op.create_index(
        "ix_job_queue_queue_claim",
        "job_queue",
        ["queue", *CLAIM_ORDER],
        sqlite_where=where,
        postgresql_where=where,
    )
