"""SQLite counts enqueues from the job rows: mark every existing row as counted

Revision ID: 0010_enqueue_count_mark
Revises: 0009_backtest
Create Date: 2026-12-03

From this revision on, a SQLite enqueue writes only its job row; the `enqueued` counters are
brought up to date from the rows above a mark (ADR 0036). Every job row already in the database
was counted when it was enqueued, so the mark starts at the newest one. PostgreSQL still counts
in the enqueue's own statement and keeps no mark.

Downgrading counts what is not counted yet and removes the mark, so the older code, which
counts only in the enqueue's transaction, finds counters that include every row.
"""

from __future__ import annotations

from alembic import op

revision = "0010_enqueue_count_mark"
down_revision = "0009_backtest"
branch_labels = None
depends_on = None

# Frozen copies of the names as they are at this revision.
MARK = "enqueued_counted_through"
ENQUEUED = "enqueued"


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "INSERT INTO job_metrics (name, job_type, bucket, shard, value) "
        f"SELECT '{MARK}', '', '', 0, max(id) FROM job_queue WHERE true HAVING count(*) > 0 "
        "ON CONFLICT (name, job_type, bucket, shard) DO UPDATE SET value = excluded.value"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    mark = (
        f"COALESCE((SELECT value FROM job_metrics WHERE name = '{MARK}' AND job_type = '' "
        "AND bucket = '' AND shard = 0), 0)"
    )
    op.execute(
        "INSERT INTO job_metrics (name, job_type, bucket, shard, value) "
        f"SELECT '{ENQUEUED}', job_type, '', 0, count(*) FROM job_queue WHERE id > {mark} "
        "GROUP BY job_type "
        "ON CONFLICT (name, job_type, bucket, shard) DO UPDATE SET value = value + excluded.value"
    )
    op.execute(f"DELETE FROM job_metrics WHERE name = '{MARK}'")
