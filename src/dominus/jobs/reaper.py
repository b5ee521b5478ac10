"""Reclaiming the jobs of silent workers, and knowing how much silence is evidence.

A running job whose heartbeat is older than the max running age is taken to belong to a dead
worker and goes back to pending (or to the dead-letter queue on its last attempt). That judgement
is only sound if the owner could have heartbeated: when the database itself was unreachable or
stalled, every worker went silent together, and reclaiming their jobs the moment it comes back
would throw away results they already hold. So a reaper that saw the database fail or stall
lengthens the silence it takes for death by the length of that trouble (ADR 0026): a live owner
cut off by the same trouble heartbeats within its heartbeat interval of the database coming back,
so its silence never exceeds the max age plus the trouble; a dead owner's job is reclaimed the
length of the trouble later than otherwise, however often trouble comes back.

Troubles separated by less than a gap in which a live worker could have heartbeated (twice the
heartbeat interval, at most the max age) count as one. Once a max age (plus the trouble's length)
has passed after the trouble, every live worker has heartbeated since, and the plain max age
applies again.

The reaper runs on the worker's maintenance thread, beside the loop (ADR 0032). Its own worker's
claims are never at risk from it: every claim the worker holds (finished-but-unrecorded ones
included) carries a heartbeat no older than the worker's last heartbeat, which the loop publishes
(`own_claims_fresh_since`); a pass runs only while that heartbeat is younger than the silence it
judges by, and is skipped otherwise (the worker's own loop is then in trouble, and the database
probably with it).

A pass can be held up itself: on SQLite its transaction waits for the write lock while another
process holds it, and every worker's heartbeat waits behind the same lock. When the pass gets the
database, the live workers' silence includes the whole hold, from perhaps before the pass began,
and the first of them to heartbeat may come a moment after it. So a pass that waited longer than
its patience (a twentieth of the max age, at most 1 s) judges nothing: the wait is recorded as
trouble and the next pass comes an interval after the database answered, when the workers held
up with it have heartbeated.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta

from dominus.jobs.clock import EARLIEST
from dominus.jobs.model import ReclaimedJob
from dominus.jobs.store import DatabaseWaitedError, JobStore, RetryDelay

log = logging.getLogger("dominus.worker")
# Jobs taken back from one worker that get a log line each; the rest get one line together.
EACH_LOGGED = 10

# The longest a reclaim pass waits for the database before its judgement is void (less for a
# max running age under 20 s: a twentieth of it).
PATIENCE_CAP_SECONDS = 1.0


class StaleJobReaper:
    """Trouble is reported from the worker's loop thread; passes run on its maintenance thread.
    A lock keeps the two consistent."""

    def __init__(
        self,
        store: JobStore,
        *,
        max_running_age_seconds: float,
        interval_seconds: float,
        retry_delay: RetryDelay,
        heartbeat_interval_seconds: float,
    ) -> None:
        self._store = store
        self._max_age = timedelta(seconds=max_running_age_seconds)
        self._interval = timedelta(seconds=interval_seconds)
        self._retry_delay = retry_delay
        # A healthy gap shorter than this may not have let a live worker heartbeat.
        self._merge_gap = min(self._max_age, timedelta(seconds=2 * heartbeat_interval_seconds))
        # A pass that waits longer than this for the database judges nothing: whatever held it
        # up held the other workers' heartbeats up too, for at least that long and perhaps from
        # before the pass began. Small beside the max age, so that a pass beginning late in a
        # long hold misses at most this much of it; long enough for ordinary waits on a busy
        # writer.
        self._patience_seconds = min(PATIENCE_CAP_SECONDS, max_running_age_seconds / 20)
        self._lock = threading.Lock()
        self._next_at = EARLIEST
        # The latest stretch of database trouble this worker saw: (start, end), or None.
        self._trouble: tuple[datetime, datetime] | None = None
        # When the trouble the loop is in now began (None while the database answers it).
        self._ongoing_since: datetime | None = None

    @property
    def stall_seconds(self) -> float:
        """A tick slower than this was a stall long enough that live workers blocked by it too
        may have stayed silent for close to the max running age."""
        return self._max_age.total_seconds() / 2

    @property
    def interval_seconds(self) -> float:
        return self._interval.total_seconds()

    def trouble_began(self, start: datetime) -> None:
        """The loop's ticks fail from `start` on; until `database_trouble` reports the end, the
        trouble counts as lasting until the moment of each pass."""
        with self._lock:
            if self._ongoing_since is None:
                self._ongoing_since = start

    def database_trouble(self, start: datetime, end: datetime) -> None:
        """The database failed or stalled for this worker from `start` to `end` (and answers
        again)."""
        with self._lock:
            self._ongoing_since = None
            merged = self._merged(start, end)
            if merged == (start, end) and end - start > timedelta(0):
                log.info(
                    "database trouble for %.1f s: other workers' silence is judged that much "
                    "longer",
                    (end - start).total_seconds(),
                )
            self._trouble = merged

    def _merged(self, start: datetime, end: datetime) -> tuple[datetime, datetime]:
        previous = self._trouble
        if previous is not None and start - previous[1] <= self._merge_gap:
            return min(start, previous[0]), max(end, previous[1])
        return start, end

    def seconds_since_trouble(self, now: datetime) -> float | None:
        """Seconds since the latest database trouble this worker saw ended (0 while it lasts),
        or None when it saw none that still counts."""
        with self._lock:
            if self._ongoing_since is not None:
                return 0.0
            if self._trouble is None:
                return None
            return max(0.0, (now - self._trouble[1]).total_seconds())

    def stale_after(self, now: datetime) -> timedelta:
        """The heartbeat age from which a running job is taken to be abandoned, at `now`."""
        with self._lock:
            return self._stale_after(now)

    def _stale_after(self, now: datetime) -> timedelta:
        if self._ongoing_since is not None:
            start, end = self._merged(self._ongoing_since, now)
            return self._max_age + max(end - start, timedelta(0))
        if self._trouble is None:
            return self._max_age
        start, end = self._trouble
        length = max(end - start, timedelta(0))
        if now - end > self._max_age + length:
            self._trouble = None  # every live worker has heartbeated since
            return self._max_age
        return self._max_age + length

    def maybe_reclaim(self, now: datetime, own_claims_fresh_since: datetime) -> list[ReclaimedJob]:
        """Reclaim stale jobs if a pass is due and safe for this worker's own claims (whose
        heartbeats are all at least `own_claims_fresh_since`); returns them."""
        with self._lock:
            if now < self._next_at:
                return []
            stale_after = self._stale_after(now)
            self._next_at = now + self._interval
        if own_claims_fresh_since < now - stale_after:
            log.warning(
                "no reclaim pass: this worker's own heartbeat is %.1f s old, beyond the %.1f s "
                "of silence a pass would judge by",
                (now - own_claims_fresh_since).total_seconds(),
                stale_after.total_seconds(),
            )
            return []
        began = time.monotonic()
        try:
            reclaimed = self._store.reclaim_stale(
                now,
                stale_after.total_seconds(),
                self._retry_delay,
                reach_by=began + self._patience_seconds,
            )
        except DatabaseWaitedError as waited:
            self._waited_for_database(now, waited.reached_at - began)
            return []
        log_taken_back(reclaimed, "reclaimed from silent worker")
        return reclaimed

    def _waited_for_database(self, now: datetime, seconds: float) -> None:
        """A pass that began at `now` waited `seconds` for the database, and judged nothing: the
        wait is trouble every worker shared (ADR 0026), and the next pass comes an interval
        after the database answered, so that the workers held up with this one heartbeat
        first."""
        answered = now + timedelta(seconds=seconds)
        with self._lock:
            self._trouble = self._merged(now, answered)
            self._next_at = max(self._next_at, answered + self._interval)
        log.info(
            "reclaim pass waited %.1f s for the database: other workers were held up too, so "
            "their silence is judged again after they have had time to heartbeat",
            seconds,
        )


def log_taken_back(jobs: list[ReclaimedJob], how: str) -> None:
    """One WARNING per job taken back from another worker (`how` says from what kind), and one
    WARNING a worker for the rest once a worker left more than EACH_LOGGED: a worker killed
    while holding jobs claimed ahead leaves up to a thousand, and a line each would bury the
    log. Every job's own record is its `reclaimed` event (`dominus jobs show ID`)."""
    by_worker: dict[str | None, list[ReclaimedJob]] = {}
    for job in jobs:
        by_worker.setdefault(job.from_worker, []).append(job)
    for worker, taken in by_worker.items():
        for job in taken[:EACH_LOGGED]:
            log.warning(
                "job %d %s %s %s (attempt %d)%s",
                job.job_id,
                job.job_type,
                how,
                worker,
                job.attempt,
                "; attempts exhausted, dead-lettered" if job.dead_lettered else "",
            )
        rest = taken[EACH_LOGGED:]
        if rest:
            dead = sum(job.dead_lettered for job in rest)
            log.warning(
                "%d more jobs %s %s (ids %d to %d; %d of them dead-lettered, attempts "
                "exhausted): each has its reclaimed event",
                len(rest),
                how,
                worker,
                min(job.job_id for job in rest),
                max(job.job_id for job in rest),
                dead,
            )
