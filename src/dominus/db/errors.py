"""Driver errors leave the database layer as `DatabaseError` (or `DatabaseBusyError` when the
database stayed locked), with the original kept as `__cause__`.

The error's message says what failed in DOMINUS's words ("the database is unavailable"); the
driver's own text goes into `detail`. The two differ on purpose: a driver's text can name hosts,
users, databases and file paths (`password authentication failed for user "x"`), which an API
client has no business seeing, while an operator needs exactly that. So the API answers with the
message and logs the detail; the CLI prints the message and logs the detail (see ADR 0011)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from dominus.db.drivers import driver_errors, loaded_psycopg
from dominus.errors import DatabaseBusyError, DatabaseError

_SQLITE_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED (and their extended codes' low byte)
_POSTGRES_BUSY_STATES = {"40001", "40P01", "55P03"}  # serialization, deadlock, lock not available

BUSY = "the database is busy; try again"
UNAVAILABLE = "the database is unavailable"
FAILED = "the database could not complete the operation"
READ_ONLY = "the database is read-only"

# Primary result codes (https://sqlite.org/rescode.html) worth their own words.
_SQLITE_MESSAGES = {
    3: "access to the database file was denied",  # SQLITE_PERM
    8: READ_ONLY,  # SQLITE_READONLY
    10: "the database file could not be read or written (input/output error)",  # SQLITE_IOERR
    11: "the database file is damaged",  # SQLITE_CORRUPT
    13: "the database is full: no space left on its disk (or its size limit reached)",  # FULL
    14: "the database file cannot be opened",  # SQLITE_CANTOPEN
    26: "the database file is not a SQLite database",  # SQLITE_NOTADB
}
# SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
_POSTGRES_UNAVAILABLE_PREFIXES = (
    "08",
    "28",
    "3D",
    "57P",
)  # connection, auth, no database, shutdown
_POSTGRES_MESSAGES = {
    "53100": "the database server is out of disk space",
    "25006": READ_ONLY,
}


def is_busy_error(error: BaseException) -> bool:
    """True for 'the database is locked by someone else' errors, worth retrying after a pause."""
    original = getattr(error, "orig", error)
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", None)
        if code is not None:
            return code & 0xFF in _SQLITE_BUSY_CODES
        return "locked" in str(original) or "busy" in str(original)
    return getattr(original, "sqlstate", None) in _POSTGRES_BUSY_STATES


def translated(error: BaseException) -> DatabaseError:
    """The `DatabaseError` for a driver or SQLAlchemy error (raise it `from error`)."""
    original: BaseException = error
    if isinstance(error, DBAPIError) and error.orig is not None:
        original = error.orig
    detail = _driver_text(original)
    if is_busy_error(original) or isinstance(error, PoolTimeoutError):
        return DatabaseBusyError(BUSY, detail=detail)
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return DatabaseError(UNAVAILABLE, detail=detail)
    return DatabaseError(_our_words(original), detail=detail)


@contextmanager
def database_errors() -> Iterator[None]:
    try:
        yield
    except driver_errors() as error:
        # The hot paths use the driver connection directly (no SQLAlchemy wrapping).
        raise translated(error) from error


def _our_words(original: BaseException) -> str:
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", None)
        return FAILED if code is None else _SQLITE_MESSAGES.get(code & 0xFF, FAILED)
    psycopg = loaded_psycopg()  # a psycopg error means psycopg is loaded
    if psycopg is not None and isinstance(original, psycopg.Error):
        state = original.sqlstate
        if state is None:
            # No SQLSTATE: the client failed before the server answered (refused, timed out,
            # closed) or the server refused the connection itself (no such role or database).
            return UNAVAILABLE if isinstance(original, psycopg.OperationalError) else FAILED
        if state.startswith(_POSTGRES_UNAVAILABLE_PREFIXES):
            return UNAVAILABLE
        return _POSTGRES_MESSAGES.get(state, FAILED)
    return FAILED


def _driver_text(original: BaseException) -> str:
    """The driver's message on one line. SQLAlchemy's own errors append the SQL and a
    "Background on this error at: https://sqlalche.me/..." line to `str()`; `args[0]` is the
    message alone."""
    if isinstance(original, SQLAlchemyError) and original.args:
        text = str(original.args[0])
    else:
        text = str(original)
    return " ".join(text.split()) or type(original).__name__
