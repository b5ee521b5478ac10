"""Cron schedules for the job engine: each fire of each schedule enqueued exactly once, however
many schedulers run (see docs/adr/0019-cron-scheduler.md). Domain-free: which schedules exist
is the caller's business.

Public surface:

    Schedule                   a schedule as configured (cron expression, zone, job type, payload)
    Timetable                  a cron expression in a time zone: its fires as UTC instants
    Scheduler, SchedulerConfig the scheduler loop (`run()`, or `run_once(now)` in tests)
    ScheduleStore              schedules, fires and scheduler liveness in the database
    ScheduleRow, SchedulerLiveness
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dominus.lazy_exports import exported_from

if TYPE_CHECKING:
    from dominus.jobs.scheduling.model import (
        FireRecord,
        Schedule,
        SchedulerInfo,
        SchedulerLiveness,
        ScheduleRow,
    )
    from dominus.jobs.scheduling.reporting import inactive_reason
    from dominus.jobs.scheduling.scheduler import Scheduler, SchedulerConfig, SchedulerTick
    from dominus.jobs.scheduling.store import ScheduleStore
    from dominus.jobs.scheduling.timetable import Timetable, time_zone

# Each name is imported on first use (dominus.lazy_exports says why).
__getattr__ = exported_from(
    {
        "dominus.jobs.scheduling.model": (
            "FireRecord",
            "Schedule",
            "SchedulerInfo",
            "SchedulerLiveness",
            "ScheduleRow",
        ),
        "dominus.jobs.scheduling.reporting": ("inactive_reason",),
        "dominus.jobs.scheduling.scheduler": ("Scheduler", "SchedulerConfig", "SchedulerTick"),
        "dominus.jobs.scheduling.store": ("ScheduleStore",),
        "dominus.jobs.scheduling.timetable": ("Timetable", "time_zone"),
    }
)

__all__ = [
    "FireRecord",
    "Schedule",
    "ScheduleRow",
    "ScheduleStore",
    "Scheduler",
    "SchedulerConfig",
    "SchedulerInfo",
    "SchedulerLiveness",
    "SchedulerTick",
    "Timetable",
    "inactive_reason",
    "time_zone",
]
