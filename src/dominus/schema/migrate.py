"""Apply and check Alembic migrations from code (no alembic.ini needed)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Engine

from dominus.db.engine import read_only
from dominus.db.errors import database_errors
from dominus.errors import SchemaNotMigratedError

MIGRATIONS_DIRECTORY = Path(__file__).resolve().parent / "migrations"


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None, "the migrations directory has no revisions"
    return head


def known_revisions() -> frozenset[str]:
    """Every revision this code's migrations know: the head and its ancestors."""
    script = ScriptDirectory.from_config(_alembic_config())
    return frozenset(revision.revision for revision in script.walk_revisions())


def current_revision(engine: Engine) -> str | None:
    with database_errors(), read_only(engine).connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema up to `revision` (the newest by default) in one transaction."""
    config = _alembic_config()
    try:
        with database_errors(), engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    except CommandError as error:  # e.g. the database is at a revision this code never had
        raise SchemaNotMigratedError(
            f"cannot upgrade the database: {error}; is it newer than this DOMINUS?"
        ) from error


def downgrade(engine: Engine, revision: str) -> None:
    """Undo migrations down to `revision` ("base" removes every DOMINUS table)."""
    config = _alembic_config()
    with database_errors(), engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def ensure_migrated(engine: Engine) -> None:
    """Refuse to work on a database whose schema is behind (or ahead of) this code."""
    current = current_revision(engine)
    head = head_revision()
    if current == head:
        return
    if current is None:
        # No URL in the message: `/api/v1/ready` shows it to API clients (ADR 0011).
        raise SchemaNotMigratedError(
            "the database has no DOMINUS schema yet; run `dominus db upgrade` first"
        )
    raise SchemaNotMigratedError(
        f"the database schema is at revision {current} but this DOMINUS expects {head}; "
        "run `dominus db upgrade` (or upgrade DOMINUS if the database is newer)"
    )
