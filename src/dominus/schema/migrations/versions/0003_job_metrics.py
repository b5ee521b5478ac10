"""job_metrics: monotonic counters and duration histograms for /metrics

Counts of rows in job_queue are gauges: they fall when finished jobs are pruned. Prometheus
counters (jobs completed, failed attempts, reclaims, dead letters, durations) must only grow, so
they are kept here, incremented in the same transaction as the transition they count. Each row is
one shard of a counter: writers pick a shard from their worker id, so concurrent workers do not
queue on one hot row; readers add the shards up.

Revision ID: 0003_job_metrics
Revises: 0002_queue_table_tuning
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_job_metrics"
down_revision = "0002_queue_table_tuning"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_metrics",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("job_type", sa.String(200), nullable=False),
        sa.Column("bucket", sa.String(16), nullable=False),
        sa.Column("shard", sa.SmallInteger, nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("name", "job_type", "bucket", "shard", name="pk_job_metrics"),
    )


def downgrade() -> None:
    op.drop_table("job_metrics")
