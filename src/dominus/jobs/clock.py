"""One clock for every process that shares a database.

Heartbeats are written with one process's clock and judged stale with another's. On SQLite every
process runs on the same machine, so the system clock is that one clock. On PostgreSQL workers
may run on many hosts: if each used its own clock, a host whose clock runs a few minutes behind
would have its live jobs reclaimed by the others. So on PostgreSQL every timestamp DOMINUS writes
or compares comes from the database server's clock: `DatabaseClock` reads `clock_timestamp()`
now and then and extrapolates with the local monotonic clock in between (no round trip per call).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, text

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

RESYNC_SECONDS = 30.0
# The earliest aware instant: a duty first due at it is due at the first tick.
EARLIEST = datetime.min.replace(tzinfo=UTC)


# The current time, aware, in UTC. A partial rather than a function: it is read twice per job
# on the worker's path (a handler's start and end), and a partial calls `datetime.now` without a
# Python frame of its own.
utc_now: Clock = functools.partial(datetime.now, UTC)


class DatabaseClock:
    """The database server's clock, resynchronised every `resync_seconds`."""

    def __init__(self, engine: Engine, resync_seconds: float = RESYNC_SECONDS) -> None:
        self._engine = engine
        self._resync_seconds = resync_seconds
        self._lock = threading.Lock()
        self._anchor: tuple[datetime, float] | None = None  # (database time, monotonic time)
        self._synced_at = -float("inf")

    def __call__(self) -> datetime:
        monotonic = time.monotonic()
        if monotonic - self._synced_at >= self._resync_seconds:
            self._resync(monotonic)
        anchor = self._anchor
        if anchor is None:  # the database has never answered: nothing to agree with yet
            return utc_now()
        database_time, anchored_at = anchor
        return database_time + timedelta(seconds=monotonic - anchored_at)

    def _resync(self, monotonic: float) -> None:
        with self._lock:
            if monotonic - self._synced_at < self._resync_seconds:
                return  # another thread just did it
            self._synced_at = monotonic
            try:
                with self._engine.connect() as connection:
                    before = time.monotonic()
                    query = text("SELECT clock_timestamp()")
                    database_time = connection.execute(query).scalar_one()
                    after = time.monotonic()
            except Exception as error:  # noqa: BLE001 - keep extrapolating; the loop logs DB trouble
                log.warning("could not read the database clock (%s); extrapolating", error)
                return
            # The server read its clock somewhere inside the round trip; take the middle.
            self._anchor = (database_time.astimezone(UTC), (before + after) / 2)
