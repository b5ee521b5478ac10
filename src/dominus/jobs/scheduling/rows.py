"""Statements shared by the schedule store: reading rows, inserting without conflict, the
cursor's compare-and-set."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Row, select, update

from dominus.jobs.scheduling.model import (
    FireRecord,
    Schedule,
    SchedulerInfo,
    ScheduleRow,
)
from dominus.jobs.sql.tables import job_queue, schedule_fires, schedulers, schedules

ROW_COLUMNS = (*schedules.c, job_queue.c.status.label("last_job_status"))
ROWS_WITH_LAST_JOB = schedules.outerjoin(job_queue, job_queue.c.id == schedules.c.last_job_id)


def select_rows(connection: Connection, names: list[str] | None) -> dict[str, ScheduleRow]:
    query = select(*ROW_COLUMNS).select_from(ROWS_WITH_LAST_JOB).order_by(schedules.c.name)
    if names is not None:
        query = query.where(schedules.c.name.in_(names))
    return {row.name: schedule_row(row) for row in connection.execute(query)}


def new_row(schedule: Schedule, enabled: bool, now: datetime) -> dict[str, Any]:
    """The row of a schedule seen for the first time: its cursor at its next fire."""
    timetable = schedule.timetable
    assert timetable is not None, "a schedule that is off has no row to create"
    return {
        "name": schedule.name,
        "cron": timetable.expression,
        "timezone": schedule.timezone,
        "job_type": schedule.job_type,
        "payload": schedule.payload,
        "enabled": enabled,
        "next_fire_at": timetable.next_after(now) if enabled else None,
        "skipped_count": 0,
        "created_at": now,
        "updated_at": now,
    }


def move_cursor(
    connection: Connection, name: str, expected: datetime | None, values: dict[str, Any]
) -> bool:
    """Set `values` on the schedule's row if it is enabled and its cursor is still `expected`:
    the compare-and-set that lets one scheduler, and only one, act on a due cursor. On
    PostgreSQL a racing scheduler waits for the row lock, then finds the cursor moved."""
    cursor = schedules.c.next_fire_at
    matches = cursor.is_(None) if expected is None else cursor == expected
    statement = (
        update(schedules)
        .where(schedules.c.name == name, schedules.c.enabled.is_(True), matches)
        .values(values)
    )
    return connection.execute(statement).rowcount == 1


def schedule_row(row: Row[Any]) -> ScheduleRow:
    return ScheduleRow(
        name=row.name,
        cron=row.cron,
        timezone=row.timezone,
        job_type=row.job_type,
        payload=dict(row.payload or {}),
        enabled=bool(row.enabled),
        next_fire_at=row.next_fire_at,
        last_fire_at=row.last_fire_at,
        last_job_id=row.last_job_id,
        last_job_status=row.last_job_status,
        skipped_count=int(row.skipped_count),
        last_skipped_at=row.last_skipped_at,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def fire_record(row: Row[Any]) -> FireRecord:
    return FireRecord(
        schedule_name=row.schedule_name,
        fire_at=row.fire_at,
        job_id=row.job_id,
        catch_up=bool(row.catch_up),
        scheduler_id=row.scheduler_id,
        recorded_at=row.recorded_at,
    )


def scheduler_info(row: Row[Any]) -> SchedulerInfo:
    return SchedulerInfo(
        id=row.id,
        hostname=row.hostname,
        pid=row.pid,
        started_at=row.started_at,
        last_tick_at=row.last_tick_at,
        stopped_at=row.stopped_at,
    )


FIRE_COLUMNS = tuple(schedule_fires.c)
SCHEDULER_COLUMNS = tuple(schedulers.c)
