"""Waiting, in a thread of `dominus serve`, until the database is reachable and migrated: the
server starts whatever the state of its database (ADR 0006, 0011), and what runs beside it (the
embedded worker, the embedded scheduler) must never touch a schema it does not know."""

from __future__ import annotations

import logging
import threading

from sqlalchemy import Engine

from dominus.errors import DatabaseError
from dominus.jobs.backoff import Backoff, FailureStreak
from dominus.schema.migrate import ensure_migrated

# How often a waiting thread looks at the database again: soon at first, then every few
# seconds (0.5 s, 1 s, 2 s, 4 s, then every 5 s).
LOOKS = Backoff(base_seconds=0.5, max_seconds=5.0)


def wait_for_the_schema(
    engine: Engine, stop: threading.Event, who: str | None, log: logging.Logger
) -> bool:
    """True once the database is reachable and migrated; False if `stop` is set first. Says
    why it waits at WARNING, once per distinct reason ("the worker waits for the database: ..."),
    unless `who` is None."""
    failures, reported = FailureStreak(LOOKS), None
    while not stop.is_set():
        try:
            ensure_migrated(engine)
        except DatabaseError as error:
            if str(error) != reported and who is not None:
                log.warning("%s waits for the database: %s", who, error)
            reported = str(error)
            stop.wait(failures.failed())
            continue
        if reported is not None and who is not None:
            log.info("the database is ready: %s starts", who)
        return True
    return False
