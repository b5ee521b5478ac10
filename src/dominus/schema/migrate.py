"""Apply and check Alembic migrations from code (no alembic.ini needed).

Checking is what every command does before it reads (`ensure_migrated`), and it does so without
importing Alembic, which costs more than a tenth of a second of CPU: the database's revision is
one SELECT and this code's head is read from the migration files' text. Anything that text
does not settle plainly (a merge, a branch, a file of another shape) is Alembic's to answer;
tests/integration/test_migrations.py holds the two answers equal."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

from dominus.db.engine import read_only
from dominus.db.errors import database_errors
from dominus.errors import SchemaNotMigratedError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS_DIRECTORY = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "alembic_version"  # Alembic's default, which env.py keeps

# `revision = "0015_named_queues"` and `down_revision = "0014_..."` (or None) in a migration.
_REVISION = re.compile(r"""^revision(?:\s*:\s*str)?\s*=\s*["']([^"']+)["']\s*$""", re.MULTILINE)
_DOWN_REVISION = re.compile(
    r"""^down_revision(?:\s*:[^=]+)?\s*=\s*(?:None|["']([^"']+)["'])\s*$""", re.MULTILINE
)


def _alembic_config() -> Config:
    from alembic.config import Config  # noqa: PLC0415 - see the module docstring

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY))
    return config


def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory  # noqa: PLC0415 - see the module docstring

    return ScriptDirectory.from_config(_alembic_config())


def head_revision() -> str:
    """The newest revision this code's migrations know."""
    return _plain_head() or alembic_head_revision()


def alembic_head_revision() -> str:
    """The head as Alembic finds it (importing every migration)."""
    head = _scripts().get_current_head()
    assert head is not None, "the migrations directory has no revisions"
    return head


def _plain_head() -> str | None:
    """The one revision no other names as its parent, when every migration file names its own
    revision and at most one parent plainly; else None."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS_DIRECTORY / "versions").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        revision, parent = _REVISION.findall(source), _DOWN_REVISION.findall(source)
        if not revision and not parent and path.name == "__init__.py":
            continue
        if len(revision) != 1 or len(parent) != 1:
            return None
        revisions.add(revision[0])
        parents.add(parent[0])
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and len(revisions) > 0 else None


def known_revisions() -> frozenset[str]:
    """Every revision this code's migrations know: the head and its ancestors."""
    return frozenset(revision.revision for revision in _scripts().walk_revisions())


def current_revision(engine: Engine) -> str | None:
    with database_errors(), read_only(engine).connect() as connection:
        return _current_revision(connection)


def _current_revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    if len(rows) <= 1:
        return rows[0] if rows else None
    # Several heads at once: Alembic's own refusal, in its own words.
    from alembic.runtime.migration import MigrationContext  # noqa: PLC0415

    return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema up to `revision` (the newest by default) in one transaction."""
    from alembic import command  # noqa: PLC0415 - see the module docstring
    from alembic.util.exc import CommandError  # noqa: PLC0415

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
    from alembic import command  # noqa: PLC0415 - see the module docstring

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
