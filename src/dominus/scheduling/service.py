"""What the CLI and the API do with schedules: list them, run one now, enable or disable one,
build the scheduler, and notice when no scheduler is running.

Built from explicit parts (`Runtime.schedule_service` composes them): the scheduler settings,
the engine, the handler registry, how to get a queue, the database's clock and the heartbeat
interval; it never sees the process's whole configuration."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import Connection, Engine

from dominus.errors import ScheduleInactiveError, ScheduleNotFoundError
from dominus.jobs.client import JobQueue
from dominus.jobs.clock import Clock
from dominus.jobs.model import EnqueueResult
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.scheduling import (
    Schedule,
    Scheduler,
    SchedulerConfig,
    ScheduleStore,
    inactive_reason,
)
from dominus.jobs.scheduling.documents import ScheduleOut
from dominus.scheduling.defaults import configured_schedules, why_off
from dominus.scheduling.settings import SchedulerSettings, catch_up_window

# `worker` and `serve` say so at start when no scheduler has ticked for this long.
SCHEDULER_ABSENT_AFTER = timedelta(minutes=2)


class ScheduleService:
    def __init__(
        self,
        settings: SchedulerSettings,
        *,
        engine: Engine,
        registry: HandlerRegistry,
        queue: Callable[[HandlerRegistry], JobQueue],
        clock: Clock,
        heartbeat_interval_seconds: float,
        diagnostic_jobs: bool = False,
    ) -> None:
        self._settings = settings
        self._queue = queue
        self._clock = clock
        self._heartbeat_interval_seconds = heartbeat_interval_seconds
        self.registry = registry
        self.schedules = configured_schedules(settings, diagnostic_jobs=diagnostic_jobs)
        self.store = ScheduleStore(engine)

    def find(self, name: str) -> Schedule:
        for schedule in self.schedules:
            if schedule.name == name:
                return schedule
        known = ", ".join(schedule.name for schedule in self.schedules)
        raise ScheduleNotFoundError(f"no schedule named {name!r} (known: {known})")

    def documents(self) -> list[ScheduleOut]:
        rows = self.store.rows(schedule.name for schedule in self.schedules)
        now = self._clock()
        return [
            ScheduleOut.of(schedule, rows.get(schedule.name), self.registry, now)
            for schedule in self.schedules
        ]

    def run(self, name: str, queue: JobQueue | None = None) -> EnqueueResult:
        """Enqueue the schedule's job now, unless one of its jobs is pending or running."""
        schedule = self.find(name)
        self._refuse_off(schedule, "run")
        reason = inactive_reason(schedule, self.registry)
        if reason is not None:
            raise ScheduleInactiveError(f"schedule {name} is inactive ({reason}): cannot run it")
        jobs = queue or self._queue(self.registry)

        def enqueue(connection: Connection, dedupe_key: str) -> EnqueueResult:
            return jobs.enqueue_job(
                schedule.job_type, schedule.payload, dedupe_key=dedupe_key, connection=connection
            )

        return self.store.run_now(schedule, enqueue, self._clock())

    def set_enabled(self, name: str, enabled: bool) -> ScheduleOut:
        """Store the flag; every running scheduler honours it at its next tick."""
        schedule = self.find(name)
        self._refuse_off(schedule, "enable" if enabled else "disable")
        row = self.store.set_enabled(schedule, enabled, self._clock())
        return ScheduleOut.of(schedule, row, self.registry, self._clock())

    def scheduler_config(self) -> SchedulerConfig:
        return SchedulerConfig(
            heartbeat_interval_seconds=self._heartbeat_interval_seconds,
            catch_up_window_seconds=catch_up_window(self._settings).total_seconds(),
        )

    def scheduler(self, queue: JobQueue | None = None) -> Scheduler:
        return Scheduler(
            self.store,
            queue or self._queue(self.registry),
            self.schedules,
            self.scheduler_config(),
            clock=self._clock,
        )

    def absent_scheduler(self) -> str | None:
        """A warning when schedules are enabled here but no scheduler has ticked within
        SCHEDULER_ABSENT_AFTER (so their jobs are not being enqueued), else None."""
        rows = self.store.rows(schedule.name for schedule in self.schedules)
        enabled = [
            schedule.name
            for schedule in self.schedules
            if inactive_reason(schedule, self.registry) is None
            and (schedule.name not in rows or rows[schedule.name].enabled)
        ]
        if not enabled:
            return None
        now = self._clock()
        liveness = self.store.liveness(alive_since=now - SCHEDULER_ABSENT_AFTER)
        if liveness.alive:
            return None
        last = liveness.last_tick_at
        seen = "none has ever run" if last is None else f"the last tick was at {last.isoformat()}"
        return (
            f"no scheduler has ticked within the last two minutes ({seen}) while "
            f"{len(enabled)} schedule(s) are enabled ({', '.join(enabled)}): their jobs are not "
            "being enqueued; run `dominus scheduler` or `dominus serve --with-scheduler`"
        )

    def _refuse_off(self, schedule: Schedule, action: str) -> None:
        if schedule.is_off:
            reason = why_off(schedule.name, self._settings)
            raise ScheduleInactiveError(
                f"schedule {schedule.name} is off ({reason}): cannot {action} it"
            )
