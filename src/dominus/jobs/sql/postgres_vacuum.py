"""Keeping PostgreSQL's queue tables vacuumed, and saying so when an old transaction makes that
impossible.

A queue writes a dead row version for every claim and completion, and a claim walks past the dead
index entries of the jobs before it: without VACUUM it slows down job by job. Migration 0002 asks
autovacuum to vacuum `job_queue` every DEAD_TUPLES_THRESHOLD changes, but autovacuum looks at a
database only once per `autovacuum_naptime` (a minute by default): at 800 jobs/s that is up to
96,000 dead rows between its visits. So a worker vacuums `job_queue` itself once it has
DEAD_TUPLES_THRESHOLD dead rows (the worker looks every few seconds). With autovacuum on:
`VACUUM (SKIP_LOCKED) job_queue`, nothing else (autovacuum still analyses, and a table autovacuum
is at already is left to it). With autovacuum off: `VACUUM (ANALYZE)` of every queue table. Only
a role that may vacuum the table (a member of its owner, or a superuser) does; for any other
role PostgreSQL would skip it with a WARNING, so it is left to autovacuum (ADR 0059).

VACUUM can only remove a row version that no open snapshot can still see: one transaction left
open (an idle session `idle in transaction`, a long report, a forgotten replication slot) holds
the *xmin horizon* back, and every dead row since then stays, however often VACUUM runs. Running
it every few seconds then costs I/O for nothing. So when a VACUUM leaves most dead rows behind,
the session with the oldest snapshot or transaction id (`backend_xmin`, `backend_xid` in
`pg_stat_activity`) is named once at
WARNING, and no VACUUM runs again while that same snapshot holds; when it ends, VACUUM runs at
once and the recovery is logged. Drain throughput fell to 0.09-0.25 of normal during a 100 s
pin and came back within 2 s of its end (docs/reliability.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text

log = logging.getLogger("dominus.worker")

QUEUE_TABLES = ("job_queue", "job_events", "dead_letter_jobs")
# One worker at a time: a session-level advisory lock, keyed by a fixed name.
_LOCK = "SELECT pg_try_advisory_lock(hashtext('dominus.queue-maintenance'))"
_UNLOCK = "SELECT pg_advisory_unlock(hashtext('dominus.queue-maintenance'))"
# Matches the autovacuum thresholds migration 0002 gives job_queue.
DEAD_TUPLES_THRESHOLD = 1000
# A VACUUM that leaves more than this share of the dead rows behind was held back.
IN_VAIN_SHARE = 0.5

_STATS = (
    "SELECT last_analyze IS NULL AND last_autoanalyze IS NULL, n_dead_tup "
    "FROM pg_stat_user_tables WHERE relname = 'job_queue'"
)
_MAY_VACUUM = """
    SELECT pg_has_role(current_user, relowner, 'MEMBER')
           OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
      FROM pg_class WHERE oid = 'job_queue'::regclass
"""
_OLDEST_SNAPSHOT = """
    SELECT pid, coalesce(backend_xmin, backend_xid)::text, coalesce(application_name, ''),
           coalesce(state, ''), extract(epoch FROM now() - xact_start)
      FROM pg_stat_activity
     WHERE (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL) AND pid <> pg_backend_pid()
       -- a table's horizon is held only by sessions of its own database
       AND datname = current_database()
     ORDER BY greatest(age(backend_xmin), age(backend_xid)) DESC
     LIMIT 1
"""


@dataclass(frozen=True)
class Pin:
    """The session whose snapshot holds the xmin horizon back."""

    pid: int
    xmin: str
    application: str
    state: str
    open_seconds: float

    def describe(self) -> str:
        who = f"backend pid {self.pid}"
        if self.application:
            who += f" ({self.application})"
        state = self.state or "unknown state"
        return f"{who}, {state}, transaction open for {self.open_seconds:.0f} s"


class QueueVacuum:
    """The worker's housekeeping on PostgreSQL (`Backend.maintain`). One per store; called
    from the worker's maintenance thread only."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._held_back_by: Pin | None = None  # the pin named at WARNING, while it lasts
        self._held_back_unknown = False
        self._may: bool | None = None  # whether this role may vacuum job_queue, once asked

    def maintain(self) -> str | None:  # noqa: PLR0911 - each way out is one reason to stop
        """VACUUM job_queue once it has about DEAD_TUPLES_THRESHOLD dead tuples, unless an old
        snapshot makes it useless (see the module's docstring); first ANALYZE tables never
        analysed (without statistics the planner may sort every pending row instead of walking
        the claim index). Returns what it did when that is news (a first ANALYZE, a VACUUM on a
        server whose autovacuum is off); the routine VACUUM beside autovacuum is logged at
        DEBUG only."""
        with self._engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            autovacuum = connection.execute(
                text("SELECT current_setting('autovacuum')")
            ).scalar_one()
            never_analyzed, dead_tuples = _stats(connection)
            if autovacuum == "on" and never_analyzed:
                if not self._under_lock(connection, "ANALYZE", QUEUE_TABLES):
                    return None  # another worker is at it
                return "analysed the queue tables (they had no statistics yet)"
            if not never_analyzed and dead_tuples < DEAD_TUPLES_THRESHOLD:
                self._held_back_by = None
                return None
            if self._still_held_back(connection) or not self._may_vacuum(connection):
                return None
            if autovacuum == "on":
                vacuumed = self._under_lock(connection, "VACUUM (SKIP_LOCKED)", QUEUE_TABLES[:1])
            else:
                vacuumed = self._under_lock(connection, "VACUUM (ANALYZE)", QUEUE_TABLES)
            if not vacuumed:
                return None  # another worker is at it
            left = _stats(connection)[1]
            if dead_tuples >= DEAD_TUPLES_THRESHOLD and left > dead_tuples * IN_VAIN_SHARE:
                self._say_held_back(connection, left)
                return None
        self._held_back_by = None
        if autovacuum == "on":
            log.debug("vacuumed job_queue: %d dead rows before, %d after", dead_tuples, left)
            return None
        return f"autovacuum is off on the server: vacuumed the queue tables ({dead_tuples} dead)"

    @staticmethod
    def _under_lock(connection: Connection, command: str, tables: Sequence[str]) -> bool:
        """`command` on each table, under the maintenance lock; False (nothing run) if another
        worker holds that lock."""
        if not connection.execute(text(_LOCK)).scalar_one():
            return False
        try:
            for table in tables:
                connection.execute(text(f"{command} {table}"))
        finally:
            connection.execute(text(_UNLOCK))
        return True

    def _may_vacuum(self, connection: Connection) -> bool:
        """Whether this role may VACUUM job_queue. Asked once: ownership seldom changes."""
        if self._may is None:
            self._may = bool(connection.execute(text(_MAY_VACUUM)).scalar_one())
            if not self._may:
                log.info(
                    "this database role does not own job_queue, so workers leave vacuuming the "
                    "queue to autovacuum"
                )
        return self._may

    def _still_held_back(self, connection: Connection) -> bool:
        """Whether the snapshot that made the last VACUUM useless is still open."""
        if self._held_back_by is None:
            return False
        pin = _oldest_snapshot(connection)
        if pin is not None and (pin.pid, pin.xmin) == (
            self._held_back_by.pid,
            self._held_back_by.xmin,
        ):
            return True
        log.warning(
            "the transaction that held back VACUUM (%s) has ended; vacuuming the queue again",
            f"backend pid {self._held_back_by.pid}",
        )
        self._held_back_by = None
        return False

    def _say_held_back(self, connection: Connection, dead_rows: int) -> None:
        pin = _oldest_snapshot(connection)
        if pin is None:
            if not self._held_back_unknown:
                log.warning(
                    "VACUUM left %d dead rows in job_queue and no session holds an old snapshot: "
                    "look for old replication slots (pg_replication_slots) or prepared "
                    "transactions (pg_prepared_xacts)",
                    dead_rows,
                )
                self._held_back_unknown = True
            return
        self._held_back_unknown = False
        self._held_back_by = pin
        log.warning(
            "VACUUM cannot remove %d dead rows of job_queue: %s holds the oldest snapshot. "
            "Claims slow down until that transaction ends; not vacuuming again until it does",
            dead_rows,
            pin.describe(),
        )


def _stats(connection: Connection) -> tuple[bool, int]:
    row = connection.execute(text(_STATS)).one_or_none()
    return (bool(row[0]), int(row[1])) if row is not None else (False, 0)


def _oldest_snapshot(connection: Connection) -> Pin | None:
    row = connection.execute(text(_OLDEST_SNAPSHOT)).one_or_none()
    if row is None:
        return None
    return Pin(int(row[0]), str(row[1]), str(row[2]), str(row[3]), float(row[4] or 0.0))
