"""rate limits: limiters and pauses shared by every process through the database

Revision ID: 0017_rate_limits
Revises: 0016_concurrency_keys
Create Date: 2026-12-05

`rate_limits` holds a row per key configured or paused; `rate_limit_grants` the key's sliding-
window log, one row per slot of its limit (ADR 0053). Nothing existing changes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from dominus.db.types import UTCDateTime

revision = "0017_rate_limits"
down_revision = "0016_concurrency_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rate_limits",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("limit_count", sa.Integer),
        sa.Column("period_us", sa.BigInteger),
        sa.Column("paused_until", UTCDateTime),
        sa.Column("pause_reason", sa.String(500)),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_rate_limits"),
        sa.CheckConstraint(
            "(limit_count IS NULL AND period_us IS NULL) OR (limit_count >= 1 AND period_us >= 1)",
            name="ck_rate_limits_limit",
        ),
    )
    op.create_table(
        "rate_limit_grants",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("slot", sa.Integer, nullable=False),
        sa.Column("granted_us", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("key", "slot", name="pk_rate_limit_grants"),
        sa.ForeignKeyConstraint(
            ["key"],
            ["rate_limits.key"],
            name="fk_rate_limit_grants_key_rate_limits",
            ondelete="CASCADE",
        ),
    )
    op.create_index(
        "ix_rate_limit_grants_key_granted_us", "rate_limit_grants", ["key", "granted_us"]
    )


def downgrade() -> None:
    op.drop_index("ix_rate_limit_grants_key_granted_us", table_name="rate_limit_grants")
    op.drop_table("rate_limit_grants")
    op.drop_table("rate_limits")
