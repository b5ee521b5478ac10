"""`dominus db copy`: copy every DOMINUS table from one database to another, SQLite to
PostgreSQL or back (or between two databases of the same kind), so moving is one command.

What is copied: every table of `dominus.schema.tables.metadata` (jobs, events, dead-letter entries,
workers, and every domain table that exists). A domain table registered in the same metadata
later is copied too, with no change here. `alembic_version` is not copied: the target gets its
own by being migrated.

How:

- The source must be migrated to the head revision; it is only read, in one read-only
  transaction (REPEATABLE READ on PostgreSQL), so every table is read at the same moment and
  workers still writing to it cannot leave events that point at jobs the copy missed.
- The target is migrated to the head revision first (an empty database gets the schema). It is
  refused if any DOMINUS table in it has rows, unless `force`: then those rows are deleted,
  children before parents, in the transaction that copies.
- Tables are copied parents first (`metadata.sorted_tables`), ordered by primary key, streamed
  from the source in batches (`yield_per`: a server-side cursor on PostgreSQL) and inserted into
  the target in **one transaction**: all or nothing. Primary keys are kept exactly (job ids do
  not change). Values pass through the SQLAlchemy Core column types, so timestamps
  (`UTCDateTime`) and JSON documents come out as they went in on either backend.
- On PostgreSQL every serial/identity sequence is then moved past the largest copied id, so new
  rows do not collide. SQLite needs nothing: a new rowid is the largest one + 1.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from alembic.util.exc import CommandError
from sqlalchemy import Connection, Engine, Table, delete, func, inspect, select, text
from sqlalchemy.engine import URL

from dominus.db.engine import create_database_engine, parse_database_url, read_only
from dominus.db.errors import database_errors
from dominus.errors import (
    ConfigurationError,
    CopyRefusedError,
    SchemaNotMigratedError,
)
from dominus.jobs.metrics_model import ENQUEUED, ENQUEUED_COUNTED_THROUGH
from dominus.jobs.sql.backend import backend_for
from dominus.jobs.sql.metrics import Increments
from dominus.schema import migrate
from dominus.schema.tables import job_metrics, metadata

BATCH_ROWS = 5_000
BACKENDS = ("sqlite", "postgresql")

# Called after every batch (and once for an empty table): table, rows copied so far, its total.
Progress = Callable[[str, int, int], None]


@dataclass
class CopyReport:
    source: str  # URLs without their passwords
    target: str
    rows: dict[str, int] = field(default_factory=dict)  # table → rows copied, in copy order

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def copy_database(
    source_url: str,
    target_url: str,
    *,
    force: bool = False,
    batch_rows: int = BATCH_ROWS,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy every DOMINUS table from `source_url` to `target_url` (see the module docstring).

    Raises ConfigurationError (bad URL, missing source file), CopyRefusedError (same database,
    non-empty target without `force`), SchemaNotMigratedError (source not at the head revision,
    target at a revision this code does not know) and DatabaseError (driver failures; the
    target's rows are then unchanged)."""
    source, target = _parse(source_url, "source"), _parse(target_url, "target")
    if _same_database(source, target):
        raise CopyRefusedError("the source and the target are the same database")
    if source.get_backend_name() == "sqlite" and not _sqlite_file(source).is_file():
        raise ConfigurationError(f"the source database file {_sqlite_file(source)} does not exist")
    source_engine = create_database_engine(source_url, setting="--from", sqlite_mode="ro")
    target_engine = create_database_engine(target_url, setting="--to")
    report = CopyReport(_where(source_engine), _where(target_engine))
    try:
        with database_errors():
            _require_head(source_engine)
            if not force:
                with read_only(target_engine).connect() as connection:
                    _refuse_rows(connection, report.target)  # before migrating: leave it as is
            _migrate_target(target_engine)
            report.rows = _copy(source_engine, target_engine, force, batch_rows, progress)
    finally:
        source_engine.dispose()
        target_engine.dispose()
    return report


def _parse(url: str, role: str) -> URL:
    parsed = parse_database_url(url, f"the {role}")
    if parsed.get_backend_name() not in BACKENDS:
        raise ConfigurationError(
            f"the {role} must be a sqlite:/// or postgresql+psycopg:// URL, "
            f"got {parsed.drivername!r}"
        )
    if parsed.get_backend_name() == "sqlite" and _in_memory(parsed):
        raise ConfigurationError(f"the {role} must be a SQLite file, not an in-memory database")
    return parsed


def _in_memory(url: URL) -> bool:
    database = url.database or ""
    return not database or ":memory:" in database or url.query.get("mode") == "memory"


def _sqlite_file(url: URL) -> Path:
    return Path(url.database or "").expanduser().resolve()


def _same_database(source: URL, target: URL) -> bool:
    """Same file (symlinks and relative paths resolved), or same server address and database.
    A server reached under two names (localhost, 127.0.0.1) is not recognised."""
    if source.get_backend_name() != target.get_backend_name():
        return False
    if source.get_backend_name() == "sqlite":
        first, second = _sqlite_file(source), _sqlite_file(target)
        return first == second or (first.exists() and second.exists() and first.samefile(second))
    return _server_database(source) == _server_database(target)


def _server_database(url: URL) -> tuple[str, int, str]:
    host = url.host or os.environ.get("PGHOST", "localhost")
    database = url.database or url.username or os.environ.get("PGDATABASE", "")
    return host.lower(), url.port or 5432, database


def _where(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def _require_head(engine: Engine) -> None:
    current, head = migrate.current_revision(engine), migrate.head_revision()
    if current != head:
        raise SchemaNotMigratedError(
            f"the source database {_where(engine)} is at revision {current or 'none'}, not "
            f"{head}; migrate it first (DATABASE_URL=<source URL> dominus db upgrade)"
        )


def _migrate_target(engine: Engine) -> None:
    try:
        migrate.upgrade(engine)
    except CommandError as error:  # a revision this code does not know: a newer DOMINUS's
        raise SchemaNotMigratedError(
            f"cannot migrate the target database {_where(engine)}: {error}"
        ) from error


def _refuse_rows(connection: Connection, where: str) -> None:
    """Refuse a target whose DOMINUS tables (those that exist yet) hold rows."""
    inspector = inspect(connection)
    present = [table for table in metadata.sorted_tables if inspector.has_table(table.name)]
    counts = {table.name: _count(connection, table) for table in present}
    filled = [f"{name}: {rows:,}" for name, rows in counts.items() if rows]
    if filled:
        raise CopyRefusedError(
            f"the target database {where} is not empty (rows in {', '.join(filled)}); "
            "use --force to delete its rows and copy anyway"
        )


def _count(connection: Connection, table: Table) -> int:
    return connection.scalar(select(func.count()).select_from(table)) or 0


def _copy(
    source: Engine, target: Engine, force: bool, batch_rows: int, progress: Progress | None
) -> dict[str, int]:
    tables = metadata.sorted_tables
    copied: dict[str, int] = {}
    with _snapshot(source) as reading, target.begin() as writing:
        if force:
            for table in reversed(tables):  # children before parents
                writing.execute(table.delete())
        else:
            _refuse_rows(writing, _where(target))  # again, in the transaction that writes
        totals = {table.name: _count(reading, table) for table in tables}
        uncounted = backend_for(source).uncounted_enqueues(reading)
        for table in tables:
            copied[table.name] = _copy_table(
                reading, writing, table, totals[table.name], batch_rows, progress
            )
        _carry_enqueue_counts(writing, uncounted)
        if writing.dialect.name == "postgresql":
            _reset_sequences(writing, tables)
    return copied


def _carry_enqueue_counts(writing: Connection, uncounted: Mapping[str, int]) -> None:
    """The target's `enqueued` counters as the source's totals: the copied counters plus the
    source's enqueues not yet in them (SQLite counts those from the rows, ADR 0036), and every
    copied row marked as counted, whichever way each backend keeps its mark."""
    writing.execute(delete(job_metrics).where(job_metrics.c.name == ENQUEUED_COUNTED_THROUGH))
    backend = backend_for(writing.engine)
    increments = Increments()
    for job_type, count in uncounted.items():
        increments.add(ENQUEUED, job_type, count)
    backend.add_metrics(writing, increments, 0)
    backend.mark_enqueues_counted(writing)


@contextmanager
def _snapshot(engine: Engine) -> Iterator[Connection]:
    """One read-only transaction seeing the whole database at one moment (SQLite in WAL mode
    gives a deferred transaction that; PostgreSQL needs REPEATABLE READ)."""
    with read_only(engine).connect() as connection:
        if engine.dialect.name == "postgresql":
            connection.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
        with connection.begin():
            yield connection


def _copy_table(
    reading: Connection,
    writing: Connection,
    table: Table,
    total: int,
    batch_rows: int,
    progress: Progress | None,
) -> int:
    query = select(table).order_by(*table.primary_key.columns)
    result = reading.execute(query, execution_options={"yield_per": batch_rows})
    copied = 0
    for batch in result.partitions():
        writing.execute(table.insert(), [dict(row._mapping) for row in batch])
        copied += len(batch)
        if progress is not None:
            progress(table.name, copied, total)
    if copied == 0 and progress is not None:
        progress(table.name, 0, total)
    return copied


def _reset_sequences(connection: Connection, tables: list[Table]) -> None:
    """Move each serial/identity sequence so that its next value is the largest id + 1."""
    preparer = connection.dialect.identifier_preparer
    for table in tables:
        column = table.autoincrement_column
        if column is None:
            continue
        sequence = connection.scalar(
            text("SELECT pg_get_serial_sequence(:table, :column)"),
            {"table": preparer.format_table(table), "column": column.name},
        )
        if sequence is None:
            continue
        connection.execute(
            text(
                f"SELECT setval(CAST(:sequence AS regclass), "
                f"COALESCE(MAX({preparer.quote(column.name)}), 0) + 1, false) "
                f"FROM {preparer.format_table(table)}"
            ),
            {"sequence": sequence},
        )
