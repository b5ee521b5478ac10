"""The scheduler loop: enqueue each due fire of each schedule, exactly once across every
scheduler sharing the database, with no leader among them.

Each tick reads the schedules' rows (so a schedule enabled or disabled anywhere is honoured at
the next tick), plans what each due schedule needs (`plan_fires`) and applies the plan through
the store's compare-and-set; whichever scheduler wins enqueues, the others find the cursor moved.
`run_once(now)` is one tick and never sleeps; `run()` is the loop around it, waking at the next
fire, at least every `tick_interval_seconds`. Database errors are logged and backed off like the
worker's (a fire that falls due meanwhile is a catch-up fire afterwards, never lost); only a
SQLite file deleted or replaced under it stops it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection

from dominus.errors import DatabaseError, DatabaseGoneError, DominusError
from dominus.jobs.backoff import DatabaseBackoff
from dominus.jobs.client import EnqueueRequest, JobQueue
from dominus.jobs.clock import EARLIEST, utc_now
from dominus.jobs.model import EnqueueResult
from dominus.jobs.scheduling.model import Schedule, SchedulerInfo
from dominus.jobs.scheduling.planning import plan_fires
from dominus.jobs.scheduling.reporting import log_applied, log_schedules
from dominus.jobs.scheduling.store import Enqueue, ScheduleStore
from dominus.jobs.worker import new_worker_id

log = logging.getLogger("dominus.scheduler")

DAY = 86_400.0
# A cursor found ahead of this clock is logged at WARNING at most this often per schedule: a
# scheduler with a fast clock that keeps running moves it ahead again every tick.
AHEAD_WARNING_INTERVAL = timedelta(hours=1)


@dataclass(frozen=True)
class SchedulerConfig:
    # The longest wait between two ticks: how soon an enable/disable made elsewhere is seen.
    tick_interval_seconds: float = 1.0
    # How often the scheduler's liveness row is written (its `last_tick_at`).
    heartbeat_interval_seconds: float = 15.0
    # A missed fire at most this old is enqueued once when the scheduler gets to it.
    catch_up_window_seconds: float = 3600.0
    # A fire handled within this of its time is on time (fired whatever the window).
    on_time_seconds: float = 5.0
    # Fire rows older than this are deleted: far beyond any catch-up window (at most 31 days),
    # so a fire that could still be enqueued always has its row.
    fire_retention_seconds: float = 90 * DAY
    # Liveness rows of schedulers silent for this long are deleted.
    scheduler_retention_seconds: float = 7 * DAY
    prune_interval_seconds: float = 3600.0


@dataclass(frozen=True)
class SchedulerTick:
    fired: int = 0
    failed: bool = False


class Scheduler:
    def __init__(
        self,
        store: ScheduleStore,
        queue: JobQueue,
        schedules: Sequence[Schedule],
        config: SchedulerConfig | None = None,
        *,
        clock: Callable[[], datetime] = utc_now,
        scheduler_id: str | None = None,
    ) -> None:
        self.id = scheduler_id or new_worker_id()
        self._store = store
        self._queue = queue
        self._config = config or SchedulerConfig()
        self._clock = clock
        self._schedules = list(schedules)
        # Fired by this scheduler: switched on in the configuration, job type registered.
        self._active = [s for s in schedules if not s.is_off and s.job_type in queue.registry]
        # A payload its job type refuses stops the start-up. (The local clock: validating needs
        # no agreed time, and the database's clock would mean a round trip before starting.)
        for schedule in self._active:
            queue.build(EnqueueRequest(schedule.job_type, schedule.payload), utc_now())
        self._backoff = DatabaseBackoff(self._config.tick_interval_seconds)
        self._backoff_until: datetime | None = None
        self._stop = threading.Event()
        self._registered = False
        self._synced = False
        self._next_heartbeat_at = EARLIEST
        self._next_prune_at = EARLIEST
        # When each active schedule is next due, as last seen (when to wake up).
        self._due: dict[str, datetime] = {}
        # The last failure logged per schedule, so a fire that keeps failing logs once.
        self._failing: dict[str, str] = {}
        # Each schedule's enabled flag as last read, to log its changes.
        self._enabled: dict[str, bool] = {}
        # When each schedule's cursor was last logged as found ahead of this clock.
        self._ahead_warned_at: dict[str, datetime] = {}

    @property
    def active(self) -> list[Schedule]:
        return list(self._active)

    def request_shutdown(self) -> None:
        """Stop after the current tick (callable from a signal handler or another thread)."""
        self._stop.set()

    # --- the loop ------------------------------------------------------------------------
    def run(self) -> None:
        """Tick until shut down. Never raises for database trouble; raises DatabaseGoneError
        when its SQLite file was deleted or replaced (everything it wrote would be lost)."""
        log.info("scheduler %s started", self.id)
        log_schedules(self._schedules, self._queue.registry)
        gone: DatabaseGoneError | None = None
        try:
            while not self._stop.is_set():
                now = self._clock()
                try:
                    self._queue.store.verify()
                except DatabaseGoneError as error:
                    log.error("%s", error)
                    gone = error
                    break
                self.run_once(now)
                wait = (self._next_wake(now) - self._clock()).total_seconds()
                self._stop.wait(max(0.0, wait))
        finally:
            if gone is None:
                self._close()
        if gone is not None:
            raise gone

    def run_once(self, now: datetime) -> SchedulerTick:
        """One tick: register and sync (first time), write the liveness row when due, enqueue
        what is due, prune old rows when due. Database errors are logged and back off."""
        if self._backoff_until is not None and now < self._backoff_until:
            return SchedulerTick(failed=True)
        try:
            self._start(now)
            if now >= self._next_heartbeat_at:
                self._store.record_tick(self.id, now)
                self._next_heartbeat_at = now + timedelta(
                    seconds=self._config.heartbeat_interval_seconds
                )
            fired = self._fire_due(now)
            self._maybe_prune(now)
        except Exception as error:  # noqa: BLE001 - the loop survives anything, and logs it
            self._back_off(now, error)
            return SchedulerTick(failed=True)
        self._backoff.succeeded()
        self._backoff_until = None
        return SchedulerTick(fired=fired)

    # --- tick steps ----------------------------------------------------------------------
    def _start(self, now: datetime) -> None:
        if not self._registered:
            host, pid = socket.gethostname(), os.getpid()
            self._store.register_scheduler(SchedulerInfo(self.id, host, pid, now, now))
            self._registered = True
            self._next_heartbeat_at = now + timedelta(
                seconds=self._config.heartbeat_interval_seconds
            )
        if not self._synced:
            for name, change in self._store.sync(self._schedules, now).items():
                log.info("schedule %s: %s", name, change)
            self._synced = True

    def _fire_due(self, now: datetime) -> int:
        rows = self._store.rows(schedule.name for schedule in self._active)
        self._due = {}
        fired = 0
        for schedule in self._active:
            timetable = schedule.timetable
            assert timetable is not None
            row = rows.get(schedule.name)
            if row is None:
                self._synced = False  # its row went away (a database copied over): sync again
                continue
            self._notice_switch(schedule.name, row.enabled)
            if not row.enabled:
                continue
            if row.next_fire_at is None:  # just enabled elsewhere: start at the next fire
                self._store.start_cursor(schedule.name, timetable.next_after(now), now)
                continue
            plan = plan_fires(
                timetable,
                row.next_fire_at,
                now,
                catch_up_window=timedelta(seconds=self._config.catch_up_window_seconds),
                on_time=timedelta(seconds=self._config.on_time_seconds),
            )
            if plan is None:
                self._due[schedule.name] = row.next_fire_at
                continue
            try:
                applied = self._store.apply(
                    schedule.name, plan, self._enqueuer(schedule), self.id, now
                )
            except DatabaseError:
                raise
            except DominusError as error:  # the queue is full, say: the fire stays due
                self._report_failure(schedule, plan.fire_at, error)
                continue
            self._failing.pop(schedule.name, None)
            self._due[schedule.name] = plan.next_fire_at
            if plan.replanned and applied.applied:
                self._warn_ahead(schedule.name, plan.cursor, now)
            log_applied(schedule, plan, applied, now, self._config.catch_up_window_seconds)
            fired += 1 if applied.job is not None and applied.job.created else 0
        return fired

    def _notice_switch(self, name: str, enabled: bool) -> None:
        """Say when a schedule is found disabled, or enabled again (by a user, anywhere)."""
        seen = self._enabled.get(name)
        if seen == enabled:
            return
        self._enabled[name] = enabled
        if not enabled:
            log.info("schedule %s is disabled: it fires nothing until enabled", name)
        elif seen is not None:
            log.info("schedule %s is enabled again", name)

    def _warn_ahead(self, name: str, cursor: datetime, now: datetime) -> None:
        warned_at = self._ahead_warned_at.get(name)
        if warned_at is not None and abs(now - warned_at) < AHEAD_WARNING_INTERVAL:
            log.debug("schedule %s: its next fire %s was ahead again", name, cursor.isoformat())
            return
        self._ahead_warned_at[name] = now
        log.warning(
            "schedule %s: its next fire %s is ahead of this clock by more than one period "
            "(a scheduler with a fast clock?); planned again from now",
            name,
            cursor.isoformat(),
        )

    def _enqueuer(self, schedule: Schedule) -> Enqueue:
        def enqueue(connection: Connection, dedupe_key: str) -> EnqueueResult:
            return self._queue.enqueue_job(
                schedule.job_type, schedule.payload, dedupe_key=dedupe_key, connection=connection
            )

        return enqueue

    def _report_failure(
        self, schedule: Schedule, fire_at: datetime | None, error: DominusError
    ) -> None:
        if self._failing.get(schedule.name) != error.message:
            self._failing[schedule.name] = error.message
            when = fire_at.isoformat() if fire_at else "?"
            log.warning(
                "schedule %s: could not enqueue the fire of %s (%s); trying again each tick",
                schedule.name,
                when,
                error.message,
            )

    def _maybe_prune(self, now: datetime) -> None:
        if now < self._next_prune_at:
            return
        pruned = self._store.prune(
            fires_before=now - timedelta(seconds=self._config.fire_retention_seconds),
            schedulers_before=now - timedelta(seconds=self._config.scheduler_retention_seconds),
        )
        self._next_prune_at = now + timedelta(seconds=self._config.prune_interval_seconds)
        if pruned:
            log.info("pruned %d old fire and scheduler rows", pruned)

    def _back_off(self, now: datetime, error: Exception) -> None:
        delay = self._backoff.failed()
        self._backoff_until = now + timedelta(seconds=delay)
        self._backoff.log_failed_tick(log, "scheduler", error, delay)

    def _next_wake(self, now: datetime) -> datetime:
        if self._backoff_until is not None and self._backoff_until > now:
            return self._backoff_until
        wake = [now + timedelta(seconds=self._config.tick_interval_seconds), *self._due.values()]
        return min(wake)

    def _close(self) -> None:
        if self._registered:
            try:
                self._store.mark_scheduler_stopped(self.id, self._clock())
            except DatabaseError as error:
                log.error("could not mark scheduler %s stopped: %s", self.id, error)
        log.info("scheduler %s stopped", self.id)
