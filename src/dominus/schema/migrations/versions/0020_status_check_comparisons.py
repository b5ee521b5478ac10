"""status check as comparisons: SQLite checks a job's status without a temporary b-tree

Revision ID: 0020_status_check_comparisons
Revises: 0019_one_claim_index
Create Date: 2026-12-06

SQLite 3.40 codes `status IN (five constants)` in a CHECK as an ephemeral b-tree that it builds,
probes and drops for every row a statement writes: a third of the instructions of a one-job
enqueue, and as much again for each claim and completion. The same rule spelled as comparisons
joined by OR costs about 1 % of that (ADR 0065). It allows exactly the same statuses, so every
existing row meets it.

SQLite cannot alter a CHECK, and rebuilding `job_queue` would copy every row and, with foreign
keys on, cascade the old table's DROP into its events and dead letters. So the table's stored
definition is rewritten in place, by SQLite's own procedure for changing a CHECK constraint
(https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes"): in
the migration's transaction, with `writable_schema` on and the schema version raised by one, so
that every open connection reads the schema again. A definition that does not hold the rule as
migration 0001 wrote it is left as it is: the old spelling is slower, never wrong.

PostgreSQL tests `IN` against a list without a per-row structure: nothing changes there.
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Connection, text

revision = "0020_status_check_comparisons"
down_revision = "0019_one_claim_index"
branch_labels = None
depends_on = None

# Frozen copies of the rule as each revision spells it.
STATUSES = ("pending", "running", "completed", "failed", "cancelled")
AS_LIST = "status IN ({})".format(", ".join(f"'{status}'" for status in STATUSES))
AS_COMPARISONS = " OR ".join(f"status = '{status}'" for status in STATUSES)


def upgrade() -> None:
    _rewrite_check(AS_LIST, AS_COMPARISONS)


def downgrade() -> None:
    _rewrite_check(AS_COMPARISONS, AS_LIST)


def _rewrite_check(old: str, new: str) -> None:
    connection = op.get_bind()
    if connection.dialect.name != "sqlite":
        return
    definition = connection.execute(
        text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'job_queue'")
    ).scalar_one()
    if definition.count(old) != 1:
        return
    _write_table_definition(connection, definition.replace(old, new))


def _write_table_definition(connection: Connection, definition: str) -> None:
    version = connection.execute(text("PRAGMA schema_version")).scalar_one()
    connection.execute(text("PRAGMA writable_schema = ON"))
    try:
        connection.execute(
            text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = 'job_queue'"),
            {"sql": definition},
        )
        # Raising the version makes every connection, this one included, parse the schema again.
        connection.execute(text(f"PRAGMA schema_version = {int(version) + 1}"))
    finally:
        connection.execute(text("PRAGMA writable_schema = OFF"))
