"""What a schedule is (`Schedule`, as configured), what the database holds about it
(`ScheduleRow`) and about the schedulers that fire it (`SchedulerInfo`), and the dedupe keys of
the jobs it enqueues."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dominus.errors import InvalidScheduleError
from dominus.jobs.scheduling.timetable import Timetable

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
DEDUPE_PREFIX = "schedule:"
MANUAL = "manual"


@dataclass(frozen=True)
class Schedule:
    """One schedule as configured: enqueue `job_type` with `payload` whenever `cron` fires in
    `timezone`. `cron=None` is a schedule switched off by configuration: it is listed, never
    fired. The cron expression and zone are checked here (InvalidScheduleError)."""

    name: str
    job_type: str
    cron: str | None
    timezone: str = "UTC"
    payload: dict[str, Any] = field(default_factory=dict)
    timetable: Timetable | None = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not NAME_PATTERN.fullmatch(self.name):
            raise InvalidScheduleError(
                f"invalid schedule name {self.name!r}: 1 to 100 lower-case letters, digits, "
                "'.', '_' or '-', starting with a letter or digit"
            )
        timetable = None if self.cron is None else Timetable(self.cron, self.timezone)
        object.__setattr__(self, "timetable", timetable)  # derived once, in a frozen value

    @property
    def is_off(self) -> bool:
        return self.timetable is None


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    """A schedule's row: the configuration its last scheduler started with, the user's enabled
    flag, and the fire cursor (`next_fire_at`: the earliest fire no scheduler has handled)."""

    name: str
    cron: str
    timezone: str
    job_type: str
    payload: dict[str, Any]
    enabled: bool
    next_fire_at: datetime | None
    last_fire_at: datetime | None
    last_job_id: int | None
    # The last job's status, read from job_queue (None once the job is pruned, or never run).
    last_job_status: str | None
    skipped_count: int
    last_skipped_at: datetime | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class FireRecord:
    """One fire that was enqueued (`schedule_fires`)."""

    schedule_name: str
    fire_at: datetime
    job_id: int | None
    catch_up: bool
    scheduler_id: str
    recorded_at: datetime


@dataclass(frozen=True, slots=True)
class SchedulerInfo:
    id: str
    hostname: str
    pid: int
    started_at: datetime
    last_tick_at: datetime
    stopped_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SchedulerLiveness:
    """The latest tick any scheduler recorded, and how many running schedulers ticked since
    `alive_since`."""

    last_tick_at: datetime | None
    alive: int


def fire_dedupe_key(name: str, fire_at: datetime) -> str:
    """`schedule:<name>:<fire time, ISO 8601 UTC>`: one job per fire."""
    return f"{DEDUPE_PREFIX}{name}:{fire_at.astimezone(UTC).isoformat()}"


def manual_dedupe_key(name: str) -> str:
    """The key of a run asked for by hand (`schedules run`): one at a time."""
    return f"{DEDUPE_PREFIX}{name}:{MANUAL}"
