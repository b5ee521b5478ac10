"""queue table tuning: drop the (status, job_type) index; aggressive autovacuum on PostgreSQL

The claim must walk the partial claim index in order and stop after LIMIT rows. With the
(status, job_type) index present, PostgreSQL without fresh statistics chose it instead and
sorted every pending row on every claim (9 ms per claim with 20,000 jobs waiting); SQLite was
kept off it only by INDEXED BY. The index served `queue stats` alone, which can afford a scan.

A job queue turns rows over fast: every claim and completion leaves a dead tuple and a dead
entry at the front of the claim index. PostgreSQL's default autovacuum thresholds (20 % of the
table) let thousands accumulate on a big table, and every claim then walks past them. Vacuum and
analyze job_queue after about 1,000 changes instead.

Revision ID: 0002_queue_table_tuning
Revises: 0001_job_engine
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0002_queue_table_tuning"
down_revision = "0001_job_engine"
branch_labels = None
depends_on = None

AUTOVACUUM = (
    "autovacuum_vacuum_scale_factor = 0.0, autovacuum_vacuum_threshold = 1000, "
    "autovacuum_analyze_scale_factor = 0.0, autovacuum_analyze_threshold = 1000"
)


def upgrade() -> None:
    op.drop_index("ix_job_queue_status_job_type", table_name="job_queue")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE job_queue SET ({AUTOVACUUM})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE job_queue RESET (autovacuum_vacuum_scale_factor, "
            "autovacuum_vacuum_threshold, autovacuum_analyze_scale_factor, "
            "autovacuum_analyze_threshold)"
        )
    op.create_index("ix_job_queue_status_job_type", "job_queue", ["status", "job_type"])
