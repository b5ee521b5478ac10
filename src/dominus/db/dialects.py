"""The domain's SQL that SQLAlchemy can only spell per dialect, chosen here and nowhere else.

- `dialect_insert`: the INSERT that takes `ON CONFLICT` (`on_conflict_do_nothing`,
  `on_conflict_do_update`, `excluded`), a construct each dialect package offers on its own.
- `JsonArrayLength`: the length of a JSON array stored under a key of a JSON object column,
  compiled for each backend by `@compiles`, so queries use it without asking which one runs.

The job engine has its own seam (`dominus.jobs.sql.backend`); this module serves the domain's
tables (ADR 0028).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, Connection, Integer, Table, func
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.sql.visitors import InternalTraversal

# Both dialects' Insert have the same ON CONFLICT methods and `excluded`, so callers can use
# either without knowing which one they hold.
DialectInsert = postgresql.Insert | sqlite.Insert

_INSERTS: dict[str, Callable[[Table], DialectInsert]] = {
    "postgresql": postgresql.insert,
    "sqlite": sqlite.insert,
}


def dialect_insert(connection: Connection, table: Table) -> DialectInsert:
    """An INSERT into `table` that can take ON CONFLICT, in the connection's dialect."""
    name = connection.dialect.name
    try:
        make = _INSERTS[name]
    except KeyError:  # the engine factory accepts no other backend
        raise NotImplementedError(f"no INSERT ... ON CONFLICT for a {name} database") from None
    return make(table)


class JsonArrayLength(FunctionElement[int]):
    """The length of the JSON array under `key` in the JSON object `column`; NULL when the
    object has no such key (or the column is NULL)."""

    type = Integer()
    inherit_cache = True
    # The key is rendered by the compile functions below, not as a clause: it must be part of
    # the cache key, or a cached statement would reuse the first key's SQL for another key.
    # (A list, as SQLAlchemy declares it on every element class; never mutated.)
    _traverse_internals = [  # noqa: RUF012
        *FunctionElement._traverse_internals,
        ("key", InternalTraversal.dp_string),
    ]

    def __init__(self, column: ColumnElement[Any], key: str) -> None:
        self.key = key
        super().__init__(column)

    @property
    def column(self) -> ColumnElement[Any]:
        # Read from the clauses, not kept apart: an adapted copy (an alias) replaces them.
        (column,) = self.clauses
        return column


@compiles(JsonArrayLength, "postgresql")
def _jsonb_array_length(element: JsonArrayLength, compiler: SQLCompiler, **kw: Any) -> str:
    length = func.jsonb_array_length(element.column.op("->")(element.key), type_=Integer)
    return compiler.process(length, **kw)


@compiles(JsonArrayLength, "sqlite")
def _json_array_length(element: JsonArrayLength, compiler: SQLCompiler, **kw: Any) -> str:
    length = func.json_array_length(element.column, f"$.{element.key}", type_=Integer)
    return compiler.process(length, **kw)
