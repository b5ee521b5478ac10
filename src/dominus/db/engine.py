"""Engine factory for the two supported backends: SQLite (default, embedded) and PostgreSQL.

SQLite is opened in WAL mode with `synchronous=NORMAL`: a committed transaction survives a crash
of the process (the WAL is written before COMMIT returns; only a power loss can roll back the
last transactions). Write transactions start with `BEGIN IMMEDIATE`, so a writer waits for the
write lock up front (honouring `busy_timeout`) instead of failing half-way when it tries to
upgrade a read lock. Read-only work goes through `read_only(engine)`, which starts a deferred
transaction that never blocks a writer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import ConnectionPoolEntry

from dominus.errors import ConfigurationError

SQLITE_BUSY_TIMEOUT_MS = 5000
READ_ONLY_OPTION = "dominus_read_only"

# How a SQLite file is opened (SQLite's URI `mode`): "rwc" creates it (and its directory) when
# missing, "rw" requires it to exist, "ro" only reads it (and never writes, even a pragma).
SqliteMode = Literal["rwc", "rw", "ro"]
# The extended result code for "the directory is read-only, so the -shm file cannot be made".
_SQLITE_READONLY_DIRECTORY = 1544


def create_database_engine(
    url: str,
    *,
    busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS,
    setting: str = "DATABASE_URL",
    sqlite_mode: SqliteMode = "rwc",
) -> Engine:
    """Create the engine for `url` (a `sqlite:///path` or `postgresql+psycopg://...` URL).
    `setting` names where the URL came from, for error messages. `sqlite_mode` says whether a
    SQLite file may be created ("rwc", with its directory), must exist already ("rw"), or is only
    read ("ro": every transaction is a plain BEGIN and nothing is written, so a read-only file
    or directory is no obstacle)."""
    parsed = parse_database_url(url, setting)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _create_sqlite_engine(url, busy_timeout_ms, setting, sqlite_mode)
    if backend == "postgresql":
        if parsed.drivername != "postgresql+psycopg":
            url = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
        engine = create_engine(url, pool_size=10, max_overflow=20)
        event.listen(engine, "connect", _session_in_utc)
        return engine
    raise ConfigurationError(
        f"{setting} must be a sqlite:/// or postgresql+psycopg:// URL, got backend {backend!r}"
    )


def parse_database_url(url: str, setting: str) -> URL:
    """`url` parsed, or a ConfigurationError naming `setting`. SQLAlchemy raises ArgumentError
    for most malformed URLs but a plain ValueError for a port that is not a number."""
    try:
        return make_url(url)
    except (ArgumentError, ValueError) as error:
        raise ConfigurationError(f"{setting} is not a valid database URL: {url!r}") from error


def sqlite_path(engine: Engine) -> Path | None:
    """The database file of a SQLite engine, or None for other backends."""
    if engine.dialect.name != "sqlite" or not engine.url.database:
        return None
    return Path(engine.url.database).expanduser()


def read_only(engine: Engine) -> Engine:
    """The same engine (same pool) whose transactions are read-only on SQLite (plain BEGIN)."""
    return engine.execution_options(**{READ_ONLY_OPTION: True})


def _create_sqlite_engine(url: str, busy_timeout_ms: int, setting: str, mode: SqliteMode) -> Engine:
    database = make_url(url).database or ""
    if database in ("", ":memory:") or database.startswith("file::memory:"):
        raise ConfigurationError(
            "an in-memory SQLite database cannot be shared by the worker and its callers; "
            "use a file path such as sqlite:///./data/dominus.db"
        )
    path = Path(database).expanduser()
    if mode == "rwc":
        _make_directory(path.parent, setting)
    else:
        _require_file(path, setting)
    timeout = busy_timeout_ms / 1000
    engine = create_engine(
        url,
        creator=lambda: _connect_sqlite(path, mode, timeout),
        # Generous: every handler thread may write progress at once, and SQLite connections
        # are cheap; a small pool would make handlers queue for a connection, not for the lock.
        pool_size=8,
        max_overflow=64,
        execution_options={READ_ONLY_OPTION: True} if mode == "ro" else {},
    )
    event.listen(engine, "connect", _configure_wal if mode != "ro" else _configure_reader)
    event.listen(engine, "begin", _begin_sqlite_transaction)
    return engine


def _require_file(path: Path, setting: str) -> None:
    try:
        exists = path.is_file()
    except OSError as error:  # e.g. a directory on the way that this user may not enter
        raise ConfigurationError(
            f"cannot reach the database at {path.absolute()} ({error.strerror})"
        ) from error
    if not exists:
        # Most likely a typo in the path: creating an empty database (and its directories)
        # there would only turn it into a confusing "not migrated" somewhere unexpected.
        raise ConfigurationError(
            f"no database at {path.absolute()}: check {setting}, or create it with "
            "`dominus db upgrade`"
        )


def _make_directory(directory: Path, setting: str) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(
            f"{setting}: cannot create the directory {directory} ({error.strerror})"
        ) from error


def _connect_sqlite(path: Path, mode: SqliteMode, timeout: float) -> sqlite3.Connection:
    """A connection in SQLite's URI `mode`: with "rw", a file deleted while the process runs is
    not silently re-created empty by the next connection; opening fails instead."""
    uri = f"file:{quote(str(path))}?mode={mode}"
    connection = _open(uri, timeout)
    if mode != "ro":
        return connection
    try:
        connection.execute("PRAGMA schema_version").fetchone()  # opens the WAL index, if any
    except sqlite3.OperationalError as error:
        connection.close()
        wal = path.with_name(f"{path.name}-wal")
        unwritten = wal.exists() and wal.stat().st_size > 0
        if getattr(error, "sqlite_errorcode", None) != _SQLITE_READONLY_DIRECTORY or unwritten:
            raise
        # A WAL database needs its -shm file, and neither it nor a directory to create it in
        # is there: no process has the database open, and the empty WAL says every transaction
        # is in the file itself. Read the file as it stands (see ADR 0011).
        return _open(f"{uri}&immutable=1", timeout)
    return connection


def _open(uri: str, timeout: float) -> sqlite3.Connection:
    return sqlite3.connect(
        uri,
        uri=True,
        timeout=timeout,
        # The driver's own transaction handling is switched off: SQLAlchemy's begin event
        # below emits BEGIN / BEGIN IMMEDIATE itself.
        isolation_level=None,
        check_same_thread=False,
    )


def _session_in_utc(dbapi_connection: DBAPIConnection, _: ConnectionPoolEntry) -> None:
    """Every session in UTC. Every timestamp is timestamptz and read as an aware datetime, so
    the instant is the same in any zone; but psycopg hands back `datetime.timezone.utc` only
    for a session in UTC (`Etc/UTC`, a common server default, gives a ZoneInfo), and the
    worker converts each timestamp of each claimed job to UTC otherwise. No statement of ours
    depends on the session's zone."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("SET TimeZone TO 'UTC'")
    finally:
        cursor.close()
    dbapi_connection.commit()


def _configure_wal(dbapi_connection: DBAPIConnection, _: ConnectionPoolEntry) -> None:
    assert isinstance(dbapi_connection, sqlite3.Connection)
    dbapi_connection.execute("PRAGMA journal_mode=WAL")
    _configure_reader(dbapi_connection, _)


def _configure_reader(dbapi_connection: DBAPIConnection, _: ConnectionPoolEntry) -> None:
    """The per-connection settings. Not `journal_mode=WAL`: on a database not yet in WAL mode
    that pragma writes the file header, which a read-only connection must not try."""
    assert isinstance(dbapi_connection, sqlite3.Connection)
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")
    dbapi_connection.execute("PRAGMA foreign_keys=ON")


def _begin_sqlite_transaction(connection: Connection) -> None:
    options: Mapping[str, Any] = connection.get_execution_options()
    statement = "BEGIN" if options.get(READ_ONLY_OPTION) else "BEGIN IMMEDIATE"
    # Straight to the driver: SQLAlchemy does not track BEGIN itself, and its execution path
    # would double the cost of the short transactions the worker runs.
    connection.connection.driver_connection.execute(statement)  # type: ignore[union-attr]
