"""The stable JSON shape of a schedule, shared by `dominus schedules list --json` and
`GET /api/v1/schedules`. Keys may be added; existing keys keep their meaning."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from dominus.jobs.documents import timestamp
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.scheduling.model import Schedule, ScheduleRow
from dominus.jobs.scheduling.reporting import inactive_reason


class ScheduleState(StrEnum):
    ENABLED = "enabled"  # fires (whenever a scheduler runs)
    DISABLED = "disabled"  # switched off by a user (`schedules disable`), until enabled
    INACTIVE = "inactive"  # its job type is not registered in this version: fires nothing
    OFF = "off"  # its cron setting is `off`


def schedule_state(schedule: Schedule, row: ScheduleRow | None, registry: HandlerRegistry) -> str:
    if schedule.is_off:
        return ScheduleState.OFF
    if inactive_reason(schedule, registry) is not None:
        return ScheduleState.INACTIVE
    if row is not None and not row.enabled:
        return ScheduleState.DISABLED
    return ScheduleState.ENABLED


PRUNED = "pruned"


def last_job_status(row: ScheduleRow | None) -> str | None:
    """The last job's status; "pruned" once the finished job was deleted (schedules keep its
    id, without a foreign key, for exactly this)."""
    if row is None or row.last_job_id is None:
        return None
    return row.last_job_status or PRUNED


def schedule_document(
    schedule: Schedule, row: ScheduleRow | None, registry: HandlerRegistry, now: datetime
) -> dict[str, Any]:
    """The schedule as configured here, with what the database holds about it. A schedule no
    scheduler has seen yet has no row: enabled, next fire computed from now."""
    state = schedule_state(schedule, row, registry)
    next_fire = None
    if state == ScheduleState.ENABLED and schedule.timetable is not None:
        cursor = row.next_fire_at if row is not None else None
        next_fire = cursor or schedule.timetable.next_after(now)
    return {
        "name": schedule.name,
        "job_type": schedule.job_type,
        "cron": schedule.timetable.expression if schedule.timetable else None,
        "timezone": schedule.timezone,
        "payload": schedule.payload,
        "state": str(state),
        "enabled": True if row is None else row.enabled,
        "inactive_reason": inactive_reason(schedule, registry),
        "next_fire_at": timestamp(next_fire),
        "last_fire_at": timestamp(row.last_fire_at if row else None),
        "last_job_id": row.last_job_id if row else None,
        "last_job_status": last_job_status(row),
        "skipped_count": row.skipped_count if row else 0,
        "last_skipped_at": timestamp(row.last_skipped_at if row else None),
        "updated_at": timestamp(row.updated_at if row else None),
    }
