"""The renewal clock: days until a renewal, counted in UTC calendar days.

A renewal date is a calendar date (registries expire names by date), so the count is the
difference between that date and today's date in UTC, whatever the time of day: at 23:59:59 UTC
a renewal due tomorrow is 1 day away, one second later it is 0 (due today). Negative: past due."""

from __future__ import annotations

from datetime import UTC, date, datetime


def utc_today(now: datetime) -> date:
    if now.tzinfo is None:
        raise ValueError("naive datetime given where a UTC timestamp is required")
    return now.astimezone(UTC).date()


def days_until_renewal(renewal_date: date, now: datetime) -> int:
    return (renewal_date - utc_today(now)).days


def within_horizon(days: int, horizon_days: int) -> bool:
    """Within the decision horizon: due in `horizon_days` days or fewer, past due included."""
    return days <= horizon_days
