"""The schedulers' last tick for `/api/v1/health`, which must stay cheap and answer 200 whatever
the database does: the tick is read at most every CACHE_SECONDS, by a thread of its own, and a
request waits for that read at most DEADLINE_SECONDS. A database that does not answer in time
(or at all, or without the schema) makes the tick `unknown`, never the health check fail."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from dominus.jobs.scheduling import ScheduleStore
from dominus.scheduling.service import SCHEDULER_ABSENT_AFTER

log = logging.getLogger("dominus.api")

CACHE_SECONDS = 2.0
DEADLINE_SECONDS = 0.5


@dataclass(frozen=True)
class SchedulerHealth:
    # ok: a running scheduler ticked within two minutes; stale: none did (the latest tick is
    # older, or its scheduler stopped); none: no scheduler ever ran; unknown: no answer.
    status: str
    last_tick_at: datetime | None = None


UNKNOWN = SchedulerHealth("unknown")


class SchedulerProbe:
    def __init__(self, store: ScheduleStore, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        self._latest: SchedulerHealth = UNKNOWN
        self._read_at = -float("inf")  # monotonic time of the latest finished read
        self._reading: threading.Event | None = None  # set when the read under way ends

    def health(self) -> SchedulerHealth:
        with self._lock:
            if time.monotonic() - self._read_at < CACHE_SECONDS:
                return self._latest
            if self._reading is None:  # one read at a time, however many requests ask
                self._reading = threading.Event()
                threading.Thread(target=self._read, name="dominus-health", daemon=True).start()
            reading = self._reading
        if not reading.wait(DEADLINE_SECONDS):
            return UNKNOWN
        with self._lock:
            return self._latest

    def _read(self) -> None:
        try:
            now = self._clock()
            liveness = self._store.liveness(alive_since=now - SCHEDULER_ABSENT_AFTER)
            if liveness.last_tick_at is None:
                found = SchedulerHealth("none")
            else:
                status = "ok" if liveness.alive else "stale"
                found = SchedulerHealth(status, liveness.last_tick_at)
        except Exception as error:  # noqa: BLE001 - health never fails; the tick is unknown
            log.debug("could not read the scheduler's last tick: %s", error)
            found = UNKNOWN
        with self._lock:
            self._latest = found
            self._read_at = time.monotonic()
            reading, self._reading = self._reading, None
        if reading is not None:
            reading.set()
