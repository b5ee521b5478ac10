"""Driver errors leave the database layer as `DatabaseError` (or `DatabaseBusyError` when the
database stayed locked), with the original kept as `__cause__`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from dominus.errors import DatabaseBusyError, DatabaseError

_SQLITE_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED (and their extended codes' low byte)
_POSTGRES_BUSY_STATES = {"40001", "40P01", "55P03"}  # serialization, deadlock, lock not available


def is_busy_error(error: BaseException) -> bool:
    """True for 'the database is locked by someone else' errors, worth retrying after a pause."""
    original = getattr(error, "orig", error)
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", None)
        if code is not None:
            return code & 0xFF in _SQLITE_BUSY_CODES
        return "locked" in str(original) or "busy" in str(original)
    return getattr(original, "sqlstate", None) in _POSTGRES_BUSY_STATES


@contextmanager
def database_errors() -> Iterator[None]:
    try:
        yield
    except DBAPIError as error:
        if is_busy_error(error):
            raise DatabaseBusyError(f"database busy: {error.orig}") from error
        raise DatabaseError(f"database error: {error.orig}") from error
    except SQLAlchemyError as error:
        raise DatabaseError(f"database error: {error}") from error
    except (sqlite3.Error, psycopg.Error) as error:
        # The hot paths use the driver connection directly (no SQLAlchemy wrapping).
        if is_busy_error(error):
            raise DatabaseBusyError(f"database busy: {error}") from error
        raise DatabaseError(f"database error: {error}") from error
