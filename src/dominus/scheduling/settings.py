"""The scheduler's settings: one cron variable per default schedule (`off` switches it off), the
time zone every schedule is read in, and the catch-up window.

`SchedulerSettings` is a base class of `dominus.config.Settings`; the values are checked
together by `configured_schedules` (an invalid expression or zone names its variable and the
reason, exit 2), which every command runs at start-up through `load_settings`.
"""

from __future__ import annotations

import re
from datetime import timedelta

from dominus.errors import ConfigurationError
from dominus.settings_slice import SettingsSlice

OFF = "off"
MAX_CATCH_UP_WINDOW = timedelta(days=31)
_DURATION = re.compile(
    r"P(?!$)(?:(?P<days>\d+)D)?(?:T(?=\d)(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?"
)


class SchedulerSettings(SettingsSlice):
    # Every schedule's wall-clock times are read in this IANA zone (DST-safe: ADR 0019).
    SCHEDULER_TIMEZONE: str = "UTC"
    # An ISO 8601 duration: a missed fire at most this old is enqueued once (PT0S: never).
    SCHEDULER_CATCHUP_WINDOW: str = "PT1H"
    SCHEDULER_BACKUP_CRON: str = "0 4 * * *"
    SCHEDULER_PRUNE_CRON: str = "0 5 * * 0"
    SCHEDULER_WATCHLIST_CRON: str = "0 */6 * * *"
    SCHEDULER_RENEWAL_CHECK_CRON: str = "0 8 * * *"
    SCHEDULER_RESCORE_CRON: str = "0 9 * * 1"
    AUTO_TUNE_ENABLED: bool = False
    AUTO_TUNE_CRON: str = "0 6 1 * *"
    # Test and demo only: a schedule enqueuing diag.noop, listed with the diagnostic job types.
    SCHEDULER_DIAG_CRON: str = OFF


def parse_duration(text: str) -> timedelta:
    """An ISO 8601 duration of days, hours, minutes and seconds (`PT1H`, `PT30M`, `P1DT12H`);
    years and months are refused (their length varies). ValueError otherwise."""
    match = _DURATION.fullmatch(text.strip().upper())
    if match is None:
        raise ValueError(text)
    parts = {name: float(value) for name, value in match.groupdict().items() if value}
    try:
        return timedelta(**parts)
    except OverflowError:
        raise ValueError(text) from None


def catch_up_window(settings: SchedulerSettings) -> timedelta:
    """SCHEDULER_CATCHUP_WINDOW, checked (ConfigurationError naming the variable)."""
    text = settings.SCHEDULER_CATCHUP_WINDOW
    try:
        window = parse_duration(text)
    except ValueError:
        window = None
    if window is None or window > MAX_CATCH_UP_WINDOW:
        raise ConfigurationError(
            f"invalid settings: SCHEDULER_CATCHUP_WINDOW={text!r}: give an ISO 8601 duration "
            "such as PT1H, PT30M or P1D, from PT0S (no catch-up) to P31D"
        )
    return window
