"""The CLI's edge: read the settings once, set up logging, open the runtime."""

from __future__ import annotations

import logging
import sys

from dominus.config import load_settings
from dominus.runtime import Runtime, build_runtime

__all__ = ["Runtime", "configure_logging", "open_runtime"]


def open_runtime(
    *, require_migrated: bool = True, create: bool = False, read_only: bool = False
) -> Runtime:
    """Read the settings, open the database and (by default) refuse an un-migrated schema and a
    SQLite file that does not exist (`create`: make it). `read_only`: a command that only reads
    once (it works on a read-only SQLite file)."""
    settings = load_settings()
    configure_logging(settings.DOMINUS_LOG_LEVEL)
    return build_runtime(
        settings, require_migrated=require_migrated, create=create, read_only=read_only
    )


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    # Alembic narrates every connection at INFO, httpx every request (thousands in an RDAP
    # stage); their warnings and errors still show.
    for noisy in ("alembic", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
