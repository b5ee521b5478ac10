"""Backend housekeeping run by workers (see `dominus.jobs.maintenance`)."""

from __future__ import annotations

import logging

from sqlalchemy import Engine, text

log = logging.getLogger("dominus.worker")

QUEUE_TABLES = ("job_queue", "job_events", "dead_letter_jobs")
# One worker at a time: a session-level advisory lock, keyed by a fixed name.
_LOCK = "SELECT pg_try_advisory_lock(hashtext('dominus.queue-maintenance'))"
_UNLOCK = "SELECT pg_advisory_unlock(hashtext('dominus.queue-maintenance'))"


# Matches the autovacuum thresholds migration 0002 gives job_queue.
DEAD_TUPLES_THRESHOLD = 1000


def maintain_postgres(engine: Engine) -> str | None:
    """When the server's autovacuum is off, VACUUM (ANALYZE) the queue tables once job_queue has
    about 1,000 dead tuples (a queue without vacuum slows down claim by claim: every claim walks
    past the dead index entries of the ones before it). With autovacuum on, only ANALYZE tables
    that were never analysed (without statistics the planner may sort every pending row instead
    of walking the claim index)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        autovacuum = connection.execute(text("SELECT current_setting('autovacuum')")).scalar_one()
        stats = connection.execute(
            text(
                "SELECT last_analyze IS NULL AND last_autoanalyze IS NULL, n_dead_tup "
                "FROM pg_stat_user_tables WHERE relname = 'job_queue'"
            )
        ).one_or_none()
        never_analyzed, dead_tuples = stats if stats is not None else (False, 0)
        if autovacuum == "on" and not never_analyzed:
            return None
        if autovacuum != "on" and not never_analyzed and dead_tuples < DEAD_TUPLES_THRESHOLD:
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
        return f"autovacuum is off on the server: vacuumed the queue tables ({dead_tuples} dead)"
    return "analysed the queue tables (they had no statistics yet)"
