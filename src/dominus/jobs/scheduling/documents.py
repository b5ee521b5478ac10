"""The stable JSON shape of a schedule, `ScheduleOut`: what `dominus schedules list --json`
prints and `GET /api/v1/schedules` returns. Keys may be added; existing keys keep their
meaning."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, cast

from pydantic import BaseModel, Field

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


StateName = Literal["enabled", "disabled", "inactive", "off"]


class ScheduleOut(BaseModel):
    name: str
    job_type: str
    cron: str | None = Field(description="The cron expression; null when the schedule is off.")
    timezone: str
    payload: dict[str, Any]
    state: StateName = Field(
        description="enabled: fires; disabled: switched off by a user; inactive: its job type "
        "is not registered in this version; off: its cron setting is `off`."
    )
    enabled: bool = Field(
        description="The flag `enable`/`disable` set (stored, kept across restarts)."
    )
    inactive_reason: str | None = None
    next_fire_at: str | None = None
    last_fire_at: str | None = None
    last_job_id: int | None = None
    last_job_status: str | None = Field(
        default=None,
        description="The last job's status (its outcome once it has ended); `pruned` once the "
        "finished job was deleted by PRUNE.",
    )
    skipped_count: int = Field(description="Missed fires that were not enqueued.")
    last_skipped_at: str | None = None
    updated_at: str | None = None

    @classmethod
    def of(
        cls,
        schedule: Schedule,
        row: ScheduleRow | None,
        registry: HandlerRegistry,
        now: datetime,
    ) -> ScheduleOut:
        """The schedule as configured here, with what the database holds about it. A schedule
        no scheduler has seen yet has no row: enabled, next fire computed from now."""
        state = schedule_state(schedule, row, registry)
        next_fire = None
        if state == ScheduleState.ENABLED and schedule.timetable is not None:
            cursor = row.next_fire_at if row is not None else None
            next_fire = cursor or schedule.timetable.next_after(now)
        return cls(
            name=schedule.name,
            job_type=schedule.job_type,
            cron=schedule.timetable.expression if schedule.timetable else None,
            timezone=schedule.timezone,
            payload=schedule.payload,
            state=cast(StateName, str(state)),
            enabled=True if row is None else row.enabled,
            inactive_reason=inactive_reason(schedule, registry),
            next_fire_at=timestamp(next_fire),
            last_fire_at=timestamp(row.last_fire_at if row else None),
            last_job_id=row.last_job_id if row else None,
            last_job_status=last_job_status(row),
            skipped_count=row.skipped_count if row else 0,
            last_skipped_at=timestamp(row.last_skipped_at if row else None),
            updated_at=timestamp(row.updated_at if row else None),
        )
