"""`ScheduleStore`: schedules, their fires and the schedulers' liveness, on SQLite and PostgreSQL.

Exactly once per fire, without a leader: a scheduler acts on a due schedule only by moving its
cursor with a compare-and-set (`rows.move_cursor`), and enqueues a fire only if it inserted the
fire's row (primary key: schedule, fire time; `INSERT … ON CONFLICT DO NOTHING`), all in the
transaction that enqueues the job. Each public method is one transaction; driver errors leave
as `DatabaseError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, delete, func, insert, literal_column, select, update

from dominus.db.engine import read_only
from dominus.db.errors import database_errors
from dominus.jobs.model import EnqueueResult
from dominus.jobs.scheduling import rows
from dominus.jobs.scheduling.model import (
    FireRecord,
    Schedule,
    SchedulerInfo,
    SchedulerLiveness,
    ScheduleRow,
    fire_dedupe_key,
    manual_dedupe_key,
)
from dominus.jobs.scheduling.planning import FirePlan
from dominus.jobs.sql.backend import Backend, backend_for
from dominus.jobs.sql.tables import job_queue, schedule_fires, schedulers, schedules

T = TypeVar("T")
# Enqueue the schedule's job inside the given transaction, with the given dedupe key.
Enqueue = Callable[[Connection, str], EnqueueResult]
IS_ACTIVE = job_queue.c.status.in_([literal_column("'pending'"), literal_column("'running'")])
# `run_now` looks for an active job among this many of the schedule's latest fires.
RECENT_FIRES = 100


@dataclass(frozen=True, slots=True)
class AppliedPlan:
    applied: bool  # False: another scheduler moved the cursor first, or the schedule is disabled
    job: EnqueueResult | None = None  # the fire's job, when this scheduler enqueued it


class ScheduleStore:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._reader = read_only(engine)
        self._backend = backend_for(engine)

    def _write(self, work: Callable[[Connection], T]) -> T:
        with database_errors(), self._engine.begin() as connection:
            return work(connection)

    def _read(self, work: Callable[[Connection], T]) -> T:
        with database_errors(), self._reader.begin() as connection:
            return work(connection)

    # --- schedules -----------------------------------------------------------------------
    def sync(self, configured: Sequence[Schedule], now: datetime) -> dict[str, str]:
        """Write each schedule's configuration into its row (a new row starts enabled, its
        cursor at the next fire). A changed expression or zone restarts the cursor at the next
        fire; the enabled flag is never touched. Schedules that are off are left alone.
        Returns the names created or changed, with what happened."""
        return self._write(lambda connection: _sync(self._backend, connection, configured, now))

    def rows(self, names: Iterable[str] | None = None) -> dict[str, ScheduleRow]:
        """Rows by name (all, or those named), each with its last job's status."""
        wanted = None if names is None else list(names)
        return self._read(lambda connection: rows.select_rows(connection, wanted))

    def start_cursor(self, name: str, first_fire: datetime, now: datetime) -> bool:
        """Give an enabled schedule without a cursor (just enabled) its first fire."""
        values = {"next_fire_at": first_fire, "updated_at": now}
        return self._write(lambda connection: rows.move_cursor(connection, name, None, values))

    def apply(
        self, name: str, plan: FirePlan, enqueue: Enqueue, scheduler_id: str, now: datetime
    ) -> AppliedPlan:
        """Carry out `plan` if the schedule's cursor is still `plan.cursor`: move the cursor,
        count the skipped fires and, if this scheduler inserts the fire's row, enqueue its job.
        All or nothing: a failed enqueue (queue full) leaves the cursor due for the next tick."""
        values: dict[str, Any] = {"next_fire_at": plan.next_fire_at, "updated_at": now}
        if plan.skipped:
            values["skipped_count"] = schedules.c.skipped_count + plan.skipped
            values["last_skipped_at"] = plan.last_skipped_at

        def work(connection: Connection) -> AppliedPlan:
            if not rows.move_cursor(connection, name, plan.cursor, values):
                return AppliedPlan(applied=False)
            if plan.fire_at is None:
                return AppliedPlan(applied=True)
            fire = {
                "schedule_name": name,
                "fire_at": plan.fire_at,
                "catch_up": plan.catch_up,
                "scheduler_id": scheduler_id,
                "recorded_at": now,
            }
            statement = self._backend.insert_or_ignore(schedule_fires, fire)
            if connection.execute(statement.returning(schedule_fires.c.fire_at)).first() is None:
                return AppliedPlan(applied=True)  # enqueued before, by whoever holds the row
            job = enqueue(connection, fire_dedupe_key(name, plan.fire_at))
            connection.execute(
                update(schedule_fires)
                .where(
                    schedule_fires.c.schedule_name == name,
                    schedule_fires.c.fire_at == plan.fire_at,
                )
                .values(job_id=job.job_id)
            )
            connection.execute(
                update(schedules)
                .where(schedules.c.name == name)
                .values(last_fire_at=plan.fire_at, last_job_id=job.job_id)
            )
            return AppliedPlan(applied=True, job=job)

        return self._write(work)

    def run_now(self, schedule: Schedule, enqueue: Enqueue, now: datetime) -> EnqueueResult:
        """Enqueue the schedule's job now, unless one of its jobs is pending or running (a
        manual one, or one of its latest fires): then that job, created=False."""

        def work(connection: Connection) -> EnqueueResult:
            connection.execute(
                self._backend.insert_or_ignore(schedules, rows.new_row(schedule, True, now))
            )
            active = _active_job(connection, schedule.name)
            if active is not None:
                return EnqueueResult(job_id=active, created=False)
            job = enqueue(connection, manual_dedupe_key(schedule.name))
            connection.execute(
                update(schedules)
                .where(schedules.c.name == schedule.name)
                .values(last_job_id=job.job_id, updated_at=now)
            )
            return job

        return self._write(work)

    def set_enabled(self, schedule: Schedule, enabled: bool, now: datetime) -> ScheduleRow:
        """Switch a schedule on or off for every scheduler. Enabling starts its cursor at the
        next fire: fires that passed while it was disabled are neither run nor counted."""
        timetable = schedule.timetable
        assert timetable is not None, "a schedule that is off cannot be switched"

        def work(connection: Connection) -> ScheduleRow:
            connection.execute(
                self._backend.insert_or_ignore(schedules, rows.new_row(schedule, enabled, now))
            )
            connection.execute(
                update(schedules)
                .where(schedules.c.name == schedule.name, schedules.c.enabled.is_not(enabled))
                .values(
                    enabled=enabled,
                    next_fire_at=timetable.next_after(now) if enabled else None,
                    updated_at=now,
                )
            )
            return rows.select_rows(connection, [schedule.name])[schedule.name]

        return self._write(work)

    def fires(self, name: str, *, limit: int = 100) -> list[FireRecord]:
        """The schedule's enqueued fires, newest first."""
        query = (
            select(*rows.FIRE_COLUMNS)
            .where(schedule_fires.c.schedule_name == name)
            .order_by(schedule_fires.c.fire_at.desc())
            .limit(limit)
        )
        return self._read(
            lambda connection: [rows.fire_record(row) for row in connection.execute(query)]
        )

    def prune(self, *, fires_before: datetime, schedulers_before: datetime) -> int:
        """Delete fire rows older than `fires_before` and schedulers silent since before
        `schedulers_before`. Returns how many rows went."""

        def work(connection: Connection) -> int:
            fires = connection.execute(
                delete(schedule_fires).where(schedule_fires.c.fire_at < fires_before)
            ).rowcount
            silent = func.coalesce(schedulers.c.stopped_at, schedulers.c.last_tick_at)
            gone = connection.execute(delete(schedulers).where(silent < schedulers_before)).rowcount
            return int(fires) + int(gone)

        return self._write(work)

    # --- schedulers ----------------------------------------------------------------------
    def register_scheduler(self, info: SchedulerInfo) -> None:
        values = {
            "id": info.id,
            "hostname": info.hostname,
            "pid": info.pid,
            "started_at": info.started_at,
            "last_tick_at": info.last_tick_at,
        }
        self._write(lambda connection: connection.execute(insert(schedulers).values(values)))

    def record_tick(self, scheduler_id: str, now: datetime) -> None:
        statement = (
            update(schedulers).where(schedulers.c.id == scheduler_id).values(last_tick_at=now)
        )
        self._write(lambda connection: connection.execute(statement))

    def mark_scheduler_stopped(self, scheduler_id: str, now: datetime) -> None:
        statement = (
            update(schedulers)
            .where(schedulers.c.id == scheduler_id)
            .values(last_tick_at=now, stopped_at=now)
        )
        self._write(lambda connection: connection.execute(statement))

    def list_schedulers(self) -> list[SchedulerInfo]:
        query = select(*rows.SCHEDULER_COLUMNS).order_by(schedulers.c.started_at.desc())
        return self._read(
            lambda connection: [rows.scheduler_info(row) for row in connection.execute(query)]
        )

    def liveness(self, alive_since: datetime) -> SchedulerLiveness:
        """The latest tick of any scheduler, and how many running ones ticked since then."""
        alive = func.count().filter(
            schedulers.c.stopped_at.is_(None), schedulers.c.last_tick_at >= alive_since
        )
        query = select(func.max(schedulers.c.last_tick_at), alive)

        def work(connection: Connection) -> SchedulerLiveness:
            last_tick, count = connection.execute(query).one()
            return SchedulerLiveness(last_tick_at=last_tick, alive=int(count or 0))

        return self._read(work)


def _sync(
    backend: Backend, connection: Connection, configured: Sequence[Schedule], now: datetime
) -> dict[str, str]:
    scheduled = [schedule for schedule in configured if schedule.timetable is not None]
    existing = rows.select_rows(connection, [schedule.name for schedule in scheduled])
    report: dict[str, str] = {}
    for schedule in scheduled:
        timetable = schedule.timetable
        assert timetable is not None
        row = existing.get(schedule.name)
        if row is None:
            connection.execute(
                backend.insert_or_ignore(schedules, rows.new_row(schedule, True, now))
            )
            report[schedule.name] = "created"
            continue
        changes: dict[str, Any] = {}
        if (row.cron, row.timezone) != (timetable.expression, schedule.timezone):
            changes = {"cron": timetable.expression, "timezone": schedule.timezone}
            if row.enabled:
                changes["next_fire_at"] = timetable.next_after(now)
            report[schedule.name] = (
                f"cron changed from {row.cron!r} ({row.timezone}) to {timetable.expression!r} "
                f"({schedule.timezone})"
            )
        if row.job_type != schedule.job_type or row.payload != schedule.payload:
            changes |= {"job_type": schedule.job_type, "payload": schedule.payload}
            report.setdefault(schedule.name, "job type or payload changed")
        if changes:
            connection.execute(
                update(schedules)
                .where(schedules.c.name == schedule.name)
                .values(changes | {"updated_at": now})
            )
    return report


def _active_job(connection: Connection, name: str) -> int | None:
    manual = connection.execute(
        select(job_queue.c.id).where(job_queue.c.dedupe_key == manual_dedupe_key(name), IS_ACTIVE)
    ).scalar_one_or_none()
    if manual is not None:
        return int(manual)
    recent = (
        select(schedule_fires.c.job_id)
        .where(schedule_fires.c.schedule_name == name, schedule_fires.c.job_id.is_not(None))
        .order_by(schedule_fires.c.fire_at.desc())
        .limit(RECENT_FIRES)
        .subquery()
    )
    fired = connection.execute(
        select(job_queue.c.id)
        .where(job_queue.c.id.in_(select(recent.c.job_id)), IS_ACTIVE)
        .order_by(job_queue.c.id.desc())
        .limit(1)
    ).scalar_one_or_none()
    return None if fired is None else int(fired)
