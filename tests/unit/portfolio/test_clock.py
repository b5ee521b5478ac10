"""The renewal clock counts UTC calendar days, whatever the time of day or the caller's zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from dominus.portfolio.model import days_until_renewal, within_horizon

RENEWAL = date(2030, 3, 10)


@pytest.mark.parametrize(
    ("now", "days"),
    [
        (datetime(2030, 3, 9, 0, 0, 0, tzinfo=UTC), 1),
        (datetime(2030, 3, 9, 23, 59, 59, 999999, tzinfo=UTC), 1),
        (datetime(2030, 3, 10, 0, 0, 0, tzinfo=UTC), 0),
        (datetime(2030, 3, 10, 23, 59, 59, tzinfo=UTC), 0),
        (datetime(2030, 3, 11, 0, 0, 0, tzinfo=UTC), -1),
        # 20:30 on the 9th in New York (UTC−5) is 01:30 on the 10th in UTC: due today
        (datetime(2030, 3, 9, 20, 30, tzinfo=timezone(timedelta(hours=-5))), 0),
        # 08:00 on the 10th in Tokyo (UTC+9) is 23:00 on the 9th in UTC: one day left
        (datetime(2030, 3, 10, 8, 0, tzinfo=timezone(timedelta(hours=9))), 1),
    ],
)
def test_days_until_renewal_around_midnight_utc(now: datetime, days: int) -> None:
    assert days_until_renewal(RENEWAL, now) == days


def test_a_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        days_until_renewal(RENEWAL, datetime(2030, 3, 9, 12, 0))


def test_the_horizon_includes_its_last_day_and_past_due() -> None:
    assert within_horizon(60, 60) and within_horizon(0, 60) and within_horizon(-5, 60)
    assert not within_horizon(61, 60)
