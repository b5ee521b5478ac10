"""A whole database's state: a digest (to assert that something refused wrote nothing) and a
snapshot to put back (so that every scenario of a stateful fuzz starts from the same rows and
the same next ids, and a failure replays as it happened)."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import Engine, delete, func, insert, select, text

from dominus.schema.tables import metadata


def database_digest(engine: Engine) -> str:
    """A digest of every row of every table of the schema: equal digests, nothing written."""
    digest = hashlib.sha256()
    with engine.connect() as connection:
        for table in metadata.sorted_tables:
            rows = connection.execute(select(table)).all()
            digest.update(table.name.encode())
            for row in sorted(repr(tuple(row)) for row in rows):
                digest.update(row.encode())
    return digest.hexdigest()


class DatabaseSnapshot:
    """Every row of every table, taken once; `restore` empties the tables and writes the rows
    back, with the id sequences where they were."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        with engine.connect() as connection:
            self.rows: dict[str, list[dict[str, Any]]] = {
                table.name: [dict(row._mapping) for row in connection.execute(select(table))]
                for table in metadata.sorted_tables
            }

    def restore(self) -> None:
        tables = metadata.sorted_tables
        with self.engine.begin() as connection:
            postgres = connection.dialect.name == "postgresql"
            if postgres:
                names = ", ".join(table.name for table in tables)
                connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
            else:
                for table in reversed(tables):
                    connection.execute(delete(table))
            for table in tables:
                if self.rows[table.name]:
                    connection.execute(insert(table), self.rows[table.name])
                if postgres and "id" in table.c and _is_integer(table.c.id.type):
                    top = connection.execute(select(func.max(table.c.id))).scalar()
                    if top is not None:
                        connection.execute(
                            text("SELECT setval(pg_get_serial_sequence(:table, 'id'), :top)"),
                            {"table": table.name, "top": top},
                        )


def _is_integer(column_type: Any) -> bool:
    try:
        return column_type.python_type is int
    except NotImplementedError:
        return False
