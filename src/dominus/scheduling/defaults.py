"""DOMINUS's schedules: the periodic jobs of the domain, each with the setting that holds its cron
expression. A schedule whose job type is not registered in this process (a worker built without
it) is listed as inactive and fires nothing.

    name               setting                         default        job
    backup             SCHEDULER_BACKUP_CRON           0 4 * * *      BACKUP
    prune              SCHEDULER_PRUNE_CRON            0 5 * * 0      PRUNE
    watchlist-poll     SCHEDULER_WATCHLIST_CRON        0 */6 * * *    WATCHLIST_POLL
    renewal-check      SCHEDULER_RENEWAL_CHECK_CRON    0 8 * * *      RENEWAL_CHECK
    portfolio-rescore  SCHEDULER_RESCORE_CRON          0 9 * * 1      PORTFOLIO_RESCORE
    weight-tune        AUTO_TUNE_CRON                  0 6 1 * *      WEIGHT_TUNE
                       (fires only with AUTO_TUNE_ENABLED=true)
    diag               SCHEDULER_DIAG_CRON             off            diag.noop
                       (listed only with the diagnostic job types)

Payloads come from settings, so a scheduled job behaves like one enqueued by hand: each entry
names a function of the settings. The backup's payload carries BACKUP_RETENTION_DAYS,
BACKUP_KEEP_LAST and BACKUP_COMPRESS, the prune's the three *_RETENTION_DAYS (ADR 0020);
portfolio-rescore's `{}` rescores every active entry; the others are `{}` until their handlers
exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dominus.errors import ConfigurationError, InvalidScheduleError
from dominus.jobs.scheduling import Schedule, time_zone
from dominus.maintenance.settings import MaintenanceSettings, backup_payload, prune_payload
from dominus.scheduling.settings import OFF, SchedulerSettings, catch_up_window


def _no_payload(_settings: SchedulerSettings) -> dict[str, Any]:
    return {}


def _backup_payload(settings: SchedulerSettings) -> dict[str, Any]:
    # The process's Settings are both; scheduler settings alone (a test's) carry no retention.
    return backup_payload(settings) if isinstance(settings, MaintenanceSettings) else {}


def _prune_payload(settings: SchedulerSettings) -> dict[str, Any]:
    return prune_payload(settings) if isinstance(settings, MaintenanceSettings) else {}


@dataclass(frozen=True)
class DefaultSchedule:
    name: str
    variable: str  # the setting with its cron expression, or `off`
    job_type: str
    payload: Callable[[SchedulerSettings], dict[str, Any]] = _no_payload
    # A boolean setting that must be true for the schedule to fire (AUTO_TUNE_ENABLED).
    switch: str | None = None


DEFAULT_SCHEDULES = (
    DefaultSchedule("backup", "SCHEDULER_BACKUP_CRON", "BACKUP", _backup_payload),
    DefaultSchedule("prune", "SCHEDULER_PRUNE_CRON", "PRUNE", _prune_payload),
    DefaultSchedule("watchlist-poll", "SCHEDULER_WATCHLIST_CRON", "WATCHLIST_POLL"),
    DefaultSchedule("renewal-check", "SCHEDULER_RENEWAL_CHECK_CRON", "RENEWAL_CHECK"),
    DefaultSchedule("portfolio-rescore", "SCHEDULER_RESCORE_CRON", "PORTFOLIO_RESCORE"),
    DefaultSchedule("weight-tune", "AUTO_TUNE_CRON", "WEIGHT_TUNE", switch="AUTO_TUNE_ENABLED"),
)
DIAGNOSTIC_SCHEDULE = DefaultSchedule("diag", "SCHEDULER_DIAG_CRON", "diag.noop")


def configured_schedules(settings: SchedulerSettings, *, diagnostic_jobs: bool) -> list[Schedule]:
    """Every schedule of these settings (the diagnostic one with `diagnostic_jobs`), those set
    to `off` included (cron None). ConfigurationError naming the variable and the reason for an
    invalid expression or zone."""
    zone = settings.SCHEDULER_TIMEZONE
    try:
        time_zone(zone)
    except InvalidScheduleError as error:
        raise ConfigurationError(
            f"invalid settings: SCHEDULER_TIMEZONE={zone!r}: {error.message}"
        ) from None
    defaults = (*DEFAULT_SCHEDULES, DIAGNOSTIC_SCHEDULE) if diagnostic_jobs else DEFAULT_SCHEDULES
    return [_schedule(default, settings, zone) for default in defaults]


def check_schedule_settings(settings: SchedulerSettings) -> None:
    """Check every scheduler setting, as each command does at start-up."""
    configured_schedules(settings, diagnostic_jobs=True)
    catch_up_window(settings)


def why_off(name: str, settings: SchedulerSettings) -> str:
    """The setting that switches the schedule `name` off, as `VARIABLE=value`."""
    for default in (*DEFAULT_SCHEDULES, DIAGNOSTIC_SCHEDULE):
        if default.name != name:
            continue
        if default.switch is not None and not getattr(settings, default.switch):
            return f"{default.switch}=false"
        return f"{default.variable}={OFF}"
    return "not configured"


def _schedule(default: DefaultSchedule, settings: SchedulerSettings, zone: str) -> Schedule:
    text = " ".join(str(getattr(settings, default.variable)).split())
    cron = None if text.lower() == OFF else text
    try:
        schedule = Schedule(default.name, default.job_type, cron, zone, default.payload(settings))
    except InvalidScheduleError as error:
        raise ConfigurationError(
            f"invalid settings: {default.variable}={text!r}: schedule {default.name}: "
            f"{error.message}"
        ) from None
    if default.switch is not None and not getattr(settings, default.switch):
        return Schedule(default.name, default.job_type, None, zone, schedule.payload)
    return schedule
