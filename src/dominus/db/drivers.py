"""The database drivers' error classes, of the drivers this process has imported.

A driver that was never imported raised nothing, so a check against its errors can skip it; and
importing it only to check would cost a command that never touches PostgreSQL (psycopg alone is
a fifth of a second of `dominus` start-up)."""

from __future__ import annotations

import sqlite3
import sys
from types import ModuleType


def loaded_psycopg() -> ModuleType | None:
    """The psycopg module if this process imported it, else None."""
    return sys.modules.get("psycopg")


def driver_errors() -> tuple[type[Exception], ...]:
    """sqlite3's, SQLAlchemy's and psycopg's base errors, those of them that are loaded."""
    kinds: list[type[Exception]] = [sqlite3.Error]
    for module, name in (("sqlalchemy.exc", "SQLAlchemyError"), ("psycopg", "Error")):
        if module in sys.modules:
            kinds.append(getattr(sys.modules[module], name))
    return tuple(kinds)
