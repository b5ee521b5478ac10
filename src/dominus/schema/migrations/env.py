"""Alembic environment. DOMINUS runs migrations in-process (`dominus db upgrade`), handing the
connection over in `config.attributes["connection"]`; there is no alembic.ini to keep in sync."""

from __future__ import annotations

from alembic import context

from dominus.schema.tables import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER most things in place; batch mode rebuilds the table instead.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
