"""The renewal clock in UTC calendar days, around midnight UTC, and the alert types with the
issue's thresholds: past due at 0 days or fewer, critical within 7, imminent within 30."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from dominus.config import load_settings
from dominus.errors import ConfigurationError
from dominus.portfolio.model import days_until_renewal as days_until
from dominus.renewals.model import AlertType, Thresholds, alert_type

RENEWAL = date(2030, 3, 8)
ISSUE_THRESHOLDS = Thresholds(critical_days=7, warning_days=30)


@pytest.mark.parametrize(
    ("now", "days"),
    [
        (datetime(2030, 3, 1, 0, 0, 0, tzinfo=UTC), 7),
        (datetime(2030, 3, 1, 23, 59, 59, 999999, tzinfo=UTC), 7),
        (datetime(2030, 3, 2, 0, 0, 0, tzinfo=UTC), 6),
        # Past midnight in Berlin, not yet in UTC: still the 1st.
        (datetime(2030, 3, 2, 0, 30, tzinfo=timezone(timedelta(hours=2))), 7),
        # Still the 1st in New York, already the 2nd in UTC.
        (datetime(2030, 3, 1, 20, 0, tzinfo=timezone(timedelta(hours=-5))), 6),
        (datetime(2030, 3, 8, 0, 0, tzinfo=UTC), 0),
        (datetime(2030, 3, 8, 23, 59, 59, tzinfo=UTC), 0),
        (datetime(2030, 3, 9, 0, 0, tzinfo=UTC), -1),
    ],
)
def test_days_until_counts_utc_calendar_days(now: datetime, days: int) -> None:
    assert days_until(RENEWAL, now) == days


def test_a_year_boundary_and_a_leap_day_count_as_calendar_days() -> None:
    assert days_until(date(2029, 1, 1), datetime(2028, 12, 31, 23, 59, tzinfo=UTC)) == 1
    assert days_until(date(2028, 3, 1), datetime(2028, 2, 28, 12, 0, tzinfo=UTC)) == 2


@pytest.mark.parametrize(
    ("days", "expected"),
    [
        (365, None),
        (31, None),
        (30, AlertType.IMMINENT),
        (8, AlertType.IMMINENT),
        (7, AlertType.CRITICAL),
        (1, AlertType.CRITICAL),
        (0, AlertType.PAST_DUE),
        (-40, AlertType.PAST_DUE),
    ],
)
def test_alert_types_follow_the_thresholds(days: int, expected: AlertType | None) -> None:
    assert alert_type(days, ISSUE_THRESHOLDS) is expected


def test_severities_and_escalation_order() -> None:
    assert [kind.severity for kind in AlertType] == ["warning", "critical", "critical"]
    ranks = sorted(AlertType, key=lambda kind: kind.rank)
    assert ranks == [AlertType.IMMINENT, AlertType.CRITICAL, AlertType.PAST_DUE]


def test_the_defaults_are_the_issue_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RENEWAL_CRITICAL_DAYS", raising=False)
    monkeypatch.delenv("RENEWAL_WARNING_DAYS", raising=False)
    settings = load_settings(_env_file=None)
    assert (settings.RENEWAL_CRITICAL_DAYS, settings.RENEWAL_WARNING_DAYS) == (7, 30)


@pytest.mark.parametrize(("critical", "warning"), [("30", "30"), ("31", "30")])
def test_critical_must_be_smaller_than_warning(
    monkeypatch: pytest.MonkeyPatch, critical: str, warning: str
) -> None:
    monkeypatch.setenv("RENEWAL_CRITICAL_DAYS", critical)
    monkeypatch.setenv("RENEWAL_WARNING_DAYS", warning)
    with pytest.raises(ConfigurationError) as raised:
        load_settings(_env_file=None)
    assert "RENEWAL_CRITICAL_DAYS must be smaller than RENEWAL_WARNING_DAYS" in str(raised.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("RENEWAL_CRITICAL_DAYS", "-1"), ("RENEWAL_WARNING_DAYS", "0"), ("RENEWAL_WARNING_DAYS", "x")],
)
def test_out_of_range_thresholds_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError, match=name):
        load_settings(_env_file=None)
