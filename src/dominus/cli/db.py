"""`dominus db ...`: schema migrations."""

from __future__ import annotations

import typer

from dominus.cli.output import console
from dominus.cli.runtime import open_runtime
from dominus.db import migrate

app = typer.Typer(help="Database schema: apply and inspect migrations.", no_args_is_help=True)


@app.command("upgrade")
def upgrade() -> None:
    """Apply every pending migration (creates the database file on SQLite)."""
    runtime = open_runtime(require_migrated=False)
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
    runtime = open_runtime(require_migrated=False)
    revision = migrate.current_revision(runtime.engine)
    console.print(
        f"database: {revision or 'not migrated'}; code expects: {migrate.head_revision()}"
    )
