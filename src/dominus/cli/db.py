"""`dominus db ...`: schema migrations, and copying a database to another backend."""

from __future__ import annotations

import typer

from dominus.cli.output import console, errors
from dominus.cli.runtime import open_runtime
from dominus.schema import migrate
from dominus.schema.copy import copy_database

app = typer.Typer(
    help="Database schema: apply and inspect migrations; copy to another database.",
    no_args_is_help=True,
)


@app.command("upgrade")
def upgrade() -> None:
    """Apply every pending migration (creates the database file on SQLite)."""
    runtime = open_runtime(require_migrated=False, create=True)
    before = migrate.current_revision(runtime.engine)
    migrate.upgrade(runtime.engine)
    after = migrate.current_revision(runtime.engine)
    where = runtime.engine.url.render_as_string(hide_password=True)
    if before == after:
        console.print(f"database {where} is up to date (revision {after})")
    else:
        console.print(f"database {where} upgraded: {before or 'empty'} → {after}")


@app.command("current")
def current() -> None:
    """Print the schema revision of the database and the one this code expects."""
    runtime = open_runtime(require_migrated=False, read_only=True)
    revision = migrate.current_revision(runtime.engine)
    console.print(
        f"database: {revision or 'not migrated'}; code expects: {migrate.head_revision()}"
    )


@app.command("copy")
def copy_command(
    source: str = typer.Option(
        ..., "--from", help="URL of the database to copy (migrated to the newest revision)."
    ),
    target: str = typer.Option(
        ..., "--to", help="URL of the database to fill (its schema is created or migrated)."
    ),
    force: bool = typer.Option(
        False, "--force", help="Delete the rows the target already holds, then copy."
    ),
) -> None:
    """Copy every DOMINUS table to another database (SQLite or PostgreSQL, either way).

    Jobs, events, dead letters, workers and domain tables, ids kept, in one transaction. The
    target's schema is created; a target with rows is refused unless --force. DATABASE_URL is
    not used."""

    def show_progress(table: str, copied: int, total: int) -> None:
        errors.print(f"{table}: {copied:,} / {total:,} rows", markup=False)

    report = copy_database(source, target, force=force, progress=show_progress)
    console.print(
        f"copied {report.total:,} rows from {report.source} to {report.target}", markup=False
    )
    width = max(len(table) for table in report.rows)
    for table, rows in report.rows.items():
        console.print(f"  {table:<{width}}  {rows:>12,}", markup=False)
