"""What a command needs, built once at the edge from the settings: engine, store, registry."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from functools import cached_property

from sqlalchemy import Engine

from dominus.config import Settings, load_settings
from dominus.db.engine import create_database_engine, sqlite_path
from dominus.db.migrate import ensure_migrated
from dominus.handlers import build_registry
from dominus.jobs.client import JobQueue
from dominus.jobs.clock import Clock, DatabaseClock, utc_now
from dominus.jobs.notifications import PostgresListener
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.sql import SqlJobStore
from dominus.jobs.wakeup import ChangeWatcher, NoChangeWatcher, SqliteDataVersionWatcher


@dataclass
class Runtime:
    settings: Settings
    engine: Engine

    @cached_property
    def store(self) -> SqlJobStore:
        return SqlJobStore(self.engine)

    def registry(self, *, diagnostic_jobs: bool = False) -> HandlerRegistry:
        return build_registry(
            diagnostic_jobs=diagnostic_jobs or self.settings.DOMINUS_DIAGNOSTIC_JOBS
        )

    @cached_property
    def clock(self) -> Clock:
        """The one clock of this database (see `dominus.jobs.clock`)."""
        return DatabaseClock(self.engine) if self.engine.dialect.name == "postgresql" else utc_now

    def queue(self, registry: HandlerRegistry | None = None) -> JobQueue:
        return JobQueue(
            self.store,
            registry or self.registry(),
            max_depth=self.settings.JOB_QUEUE_MAX_DEPTH,
            clock=self.clock,
        )

    def change_watcher(self) -> ChangeWatcher:
        path = sqlite_path(self.engine)
        if path is not None:
            return SqliteDataVersionWatcher(path)
        if self.engine.dialect.name == "postgresql":
            conninfo = self.engine.url.set(drivername="postgresql")
            return PostgresListener(conninfo.render_as_string(hide_password=False))
        return NoChangeWatcher()


def open_runtime(*, require_migrated: bool = True) -> Runtime:
    """Read the settings, open the database and (by default) refuse an un-migrated schema."""
    settings = load_settings()
    configure_logging(settings.DOMINUS_LOG_LEVEL)
    engine = create_database_engine(settings.DATABASE_URL)
    if require_migrated:
        ensure_migrated(engine)
    return Runtime(settings=settings, engine=engine)


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    # Alembic narrates every connection at INFO; its warnings and errors still show.
    logging.getLogger("alembic").setLevel(max(logging.WARNING, logging.getLogger().level))
