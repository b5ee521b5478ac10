"""Backend housekeeping run by workers (see `dominus.jobs.maintenance`)."""

from __future__ import annotations

import logging

from sqlalchemy import Engine, text

log = logging.getLogger("dominus.worker")

QUEUE_TABLES = ("job_queue", "job_events", "dead_letter_jobs")
# One worker at a time: a session-level advisory lock, keyed by a fixed name.
_LOCK = "SELECT pg_try_advisory_lock(hashtext('dominus.queue-maintenance'))"
_UNLOCK = "SELECT pg_advisory_unlock(hashtext('dominus.queue-maintenance'))"


def maintain_postgres(engine: Engine) -> str | None:
    """VACUUM (ANALYZE) the queue tables when the server's autovacuum is off (a queue without
    vacuum slows down claim by claim: every claim walks past the dead index entries of the ones
    before it); ANALYZE them once when they have never been analysed (without statistics the
    planner may sort every pending row instead of walking the claim index)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        autovacuum = connection.execute(text("SELECT current_setting('autovacuum')")).scalar_one()
        never_analyzed = connection.execute(
            text(
                "SELECT last_analyze IS NULL AND last_autoanalyze IS NULL "
                "FROM pg_stat_user_tables WHERE relname = 'job_queue'"
            )
        ).scalar_one_or_none()
        if autovacuum == "on" and not never_analyzed:
            return None
        if not connection.execute(text(_LOCK)).scalar_one():
            return None  # another worker is at it
        try:
            command = "VACUUM (ANALYZE)" if autovacuum != "on" else "ANALYZE"
            for table in QUEUE_TABLES:
                connection.execute(text(f"{command} {table}"))
        finally:
            connection.execute(text(_UNLOCK))
    if autovacuum != "on":
        return "the server's autovacuum is off: vacuumed and analysed the queue tables"
    return "analysed the queue tables (they had no statistics yet)"
