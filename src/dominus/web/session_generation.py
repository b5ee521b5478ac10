"""The dashboard's session generation, kept in the database so that every process serving the
dashboard agrees on it (sessions.py says what it is for)."""

from __future__ import annotations

from sqlalchemy import Engine, select

from dominus.db.dialects import dialect_insert
from dominus.db.errors import database_errors
from dominus.schema.tables import dashboard_session_generation as generations

_ROW = 1


class SessionGeneration:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def current(self) -> int:
        """The generation a session cookie must carry now (0 before the first logout)."""
        with database_errors(), self.engine.connect() as connection:
            found = connection.execute(
                select(generations.c.generation).where(generations.c.id == _ROW)
            ).scalar_one_or_none()
        return 0 if found is None else int(found)

    def advance(self) -> int:
        """Move to the next generation (every cookie issued before is refused from now on)
        and return it."""
        with database_errors(), self.engine.begin() as connection:
            statement = (
                dialect_insert(connection, generations)
                .values(id=_ROW, generation=1)
                .on_conflict_do_update(
                    index_elements=["id"], set_={"generation": generations.c.generation + 1}
                )
                .returning(generations.c.generation)
            )
            return int(connection.execute(statement).scalar_one())
