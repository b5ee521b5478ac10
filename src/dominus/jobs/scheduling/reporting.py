"""The scheduler's log lines: what it will fire at start-up, and each fire, catch-up and skip."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.scheduling.model import Schedule
from dominus.jobs.scheduling.planning import FirePlan
from dominus.jobs.scheduling.store import AppliedPlan

log = logging.getLogger("dominus.scheduler")


def inactive_reason(schedule: Schedule, registry: HandlerRegistry) -> str | None:
    """Why the schedule fires nothing, or None when it is active."""
    if schedule.is_off:
        return "its cron is off"
    if schedule.job_type not in registry:
        return f"job type {schedule.job_type} is not registered"
    return None


def log_schedules(schedules: Sequence[Schedule], registry: HandlerRegistry) -> None:
    if not schedules:
        log.info("no schedules are configured")
    for schedule in schedules:
        reason = inactive_reason(schedule, registry)
        if reason is not None:
            log.info("schedule %s: inactive, %s", schedule.name, reason)
        else:
            log.info(
                "schedule %s: %s (%s) enqueues %s",
                schedule.name,
                schedule.cron,
                schedule.timezone,
                schedule.job_type,
            )


def log_applied(
    schedule: Schedule, plan: FirePlan, applied: AppliedPlan, now: datetime, window: float
) -> None:
    name = schedule.name
    if not applied.applied:
        log.debug("schedule %s: another scheduler handled the fires due", name)
        return
    if plan.skipped:
        assert plan.first_skipped_at is not None and plan.last_skipped_at is not None
        why = (
            "the catch-up job stands for them"
            if plan.fire_at is not None
            else f"they are older than the catch-up window of {window:g} s"
        )
        log.warning(
            "schedule %s: %s%d missed fire(s) from %s to %s skipped: %s",
            name,
            "at least " if plan.skipped_more else "",
            plan.skipped,
            plan.first_skipped_at.isoformat(),
            plan.last_skipped_at.isoformat(),
            why,
        )
    if plan.fire_at is None:
        return
    job = applied.job
    fire = plan.fire_at.isoformat()
    if job is None:
        log.debug("schedule %s: the fire of %s was enqueued before", name, fire)
    elif plan.catch_up:
        late = (now - plan.fire_at).total_seconds()
        log.info(
            "schedule %s: catch-up of the fire of %s (%.0f s late): job %d",
            name,
            fire,
            late,
            job.job_id,
        )
    else:
        log.info("schedule %s: fired %s: job %d", name, fire, job.job_id)
    if job is not None and not job.created:
        log.info("schedule %s: an active job with the fire's key existed: job %d", name, job.job_id)
