"""RENEWAL_CHECK's check on SQLite and PostgreSQL with a clock the tests move: the renewal clock
around midnight UTC, one alert per (domain, type), escalation imminent → critical → past due,
acknowledgement kept across runs, a notification only for a new alert or an escalation, alerts
resolved when the renewal moves on or the entry leaves, and re-armed for the next renewal."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime

import pytest
from sqlalchemy import Engine, update

from dominus.errors import JobAbortedError
from dominus.renewals.check import CheckResult, RenewalCheck
from dominus.renewals.model import AlertNotFoundError, Thresholds
from dominus.renewals.store import AlertStore
from dominus.schema.tables import renewal_alerts
from tests.support.clock import FakeClock
from tests.support.portfolio_rows import add_entry, change_entry, remove_entry
from tests.support.watch_fixtures import RecordingNotifier

pytestmark = pytest.mark.backends("sqlite", "postgresql")


ISSUE_THRESHOLDS = Thresholds(critical_days=7, warning_days=30)
DAY = 86_400
NOT_SCORED = " (verdict not scored, renewal 12.50 USD)"  # the entries' verdict and cost


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2030, 3, 1, 23, 59, 59, tzinfo=UTC))


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


@pytest.fixture
def alerts(engine: Engine) -> AlertStore:
    return AlertStore(engine)


def check(engine: Engine, notifier: RecordingNotifier, clock: FakeClock) -> dict[str, int]:
    result: CheckResult = RenewalCheck(engine, notifier, ISSUE_THRESHOLDS, clock).run(
        threading.Event()
    )
    return result.document()


def counts(checked: int, created: int = 0, escalated: int = 0, sent: int = 0) -> dict[str, int]:
    return {
        "domains_checked": checked,
        "alerts_created": created,
        "alerts_escalated": escalated,
        "notifications_sent": sent,
    }


def test_an_escalation_at_midnight_utc(
    engine: Engine, alerts: AlertStore, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    add_entry(engine, "eight.com", date(2030, 3, 9), clock())  # 8 days before midnight
    add_entry(engine, "seven.com", date(2030, 3, 8), clock())  # 7 days before midnight
    assert check(engine, notifier, clock) == counts(2, created=2, sent=2)
    by_domain = {alert.domain: alert for alert in alerts.alerts()}
    assert (by_domain["eight.com"].type.value, by_domain["eight.com"].days_left) == ("imminent", 8)
    assert (by_domain["seven.com"].type.value, by_domain["seven.com"].days_left) == ("critical", 7)

    clock.advance(1)  # 2030-03-02T00:00:00Z: a day less for both
    assert check(engine, notifier, clock) == counts(2, escalated=1, sent=1)
    [escalation] = notifier.items()[2:]
    assert escalation.event == "renewal.critical"
    assert escalation.subject == (
        "eight.com renews in 7 days, on 2030-03-09: critical; escalated from imminent"
        " (verdict not scored, renewal 12.50 USD)"
    )
    assert escalation.details["escalated_from"] == "imminent"
    open_alerts = alerts.alerts()
    assert [(alert.domain, alert.type.value, alert.days_left) for alert in open_alerts] == [
        ("seven.com", "critical", 6),
        ("eight.com", "critical", 7),
    ]


def test_alerts_are_deduplicated_and_acknowledgement_survives_runs(
    engine: Engine, alerts: AlertStore, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    clock.now = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
    add_entry(engine, "kept.com", date(2030, 3, 20), clock())  # 19 days: imminent
    assert check(engine, notifier, clock) == counts(1, created=1, sent=1)
    assert check(engine, notifier, clock) == counts(1)  # same day: nothing new
    [imminent] = alerts.alerts()
    first = notifier.items()[0]
    assert (first.event, first.severity.value) == ("renewal.imminent", "warning")
    assert first.subject == "kept.com renews in 19 days, on 2030-03-20: imminent" + NOT_SCORED
    assert first.details["alert_id"] == imminent.id
    assert first.details["renewal_cost"] == 12.5
    assert first.details["acknowledge"] == f"dominus alerts ack {imminent.id}"

    acknowledged = alerts.acknowledge(imminent.id, clock())
    assert (acknowledged.state, acknowledged.acknowledged_at) == ("acknowledged", clock())
    again = alerts.acknowledge(imminent.id, clock.advance(60))
    assert again.acknowledged_at == acknowledged.acknowledged_at  # the first time is kept
    for _ in range(3):
        clock.advance(DAY)
        assert check(engine, notifier, clock) == counts(1)
    assert alerts.alerts() == []
    [still] = alerts.alerts(include_closed=True)
    assert (still.id, still.state, still.days_left) == (imminent.id, "acknowledged", 16)
    assert len(notifier.items()) == 1

    clock.advance(9 * DAY)  # 7 days left: critical, a new alert that needs its own attention
    assert check(engine, notifier, clock) == counts(1, escalated=1, sent=1)
    [critical] = alerts.alerts()
    assert (critical.type.value, critical.acknowledged_at) == ("critical", None)
    superseded = alerts.get(imminent.id)
    assert (superseded.state, superseded.escalated_at) == ("escalated", clock())
    assert superseded.acknowledged_at == acknowledged.acknowledged_at

    clock.advance(7 * DAY)  # the renewal date itself: past due
    assert check(engine, notifier, clock) == counts(1, escalated=1, sent=1)
    [past_due] = alerts.alerts()
    assert (past_due.type.value, past_due.days_left) == ("past_due", 0)
    assert notifier.items()[-1].subject == (
        "kept.com renewal is due today (2030-03-20): past due; escalated from critical"
        " (verdict not scored, renewal 12.50 USD)"
    )
    clock.advance(2 * DAY)
    assert check(engine, notifier, clock) == counts(1)
    assert alerts.alerts()[0].days_left == -2
    assert [alert.state for alert in alerts.alerts(include_closed=True)] == [
        "open",
        "escalated",
        "escalated",
    ]
    assert notifier.events() == ["renewal.imminent", "renewal.critical", "renewal.past_due"]


def test_a_first_look_within_the_critical_days_creates_the_critical_alert_only(
    engine: Engine, alerts: AlertStore, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    add_entry(engine, "late.com", date(2030, 3, 4), clock())
    add_entry(engine, "overdue.com", date(2030, 2, 1), clock())
    add_entry(engine, "far.com", date(2031, 1, 1), clock())
    add_entry(engine, "sold.com", date(2030, 3, 2), clock(), status="sold")
    assert check(engine, notifier, clock) == counts(3, created=2, sent=2)
    assert [(alert.domain, alert.type.value) for alert in alerts.alerts(include_closed=True)] == [
        ("overdue.com", "past_due"),
        ("late.com", "critical"),
    ]
    assert [notification.subject for notification in notifier.items()] == [
        # nearest date first
        "overdue.com renewal is 28 days past due (2030-02-01): past due" + NOT_SCORED,
        "late.com renews in 3 days, on 2030-03-04: critical" + NOT_SCORED,
    ]


def test_a_renewal_resolves_the_alerts_and_the_next_one_rearms_them(
    engine: Engine, alerts: AlertStore, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    add_entry(engine, "renewed.com", date(2030, 3, 5), clock())
    check(engine, notifier, clock)
    [critical] = alerts.alerts()
    alerts.acknowledge(critical.id, clock())

    change_entry(engine, "renewed.com", renewal_date=date(2031, 3, 5))  # renewed for a year
    clock.advance(DAY)
    assert check(engine, notifier, clock) == counts(1)
    assert alerts.get(critical.id).state == "resolved"
    assert alerts.alerts() == []

    clock.now = datetime(2031, 2, 28, 9, 0, tzinfo=UTC)  # 5 days before the next renewal
    assert check(engine, notifier, clock) == counts(1, created=1, sent=1)
    [again] = alerts.alerts()
    assert again.id == critical.id  # the (domain, type) row, re-armed for this renewal
    assert (again.renewal_date, again.acknowledged_at, again.resolved_at) == (
        date(2031, 3, 5),
        None,
        None,
    )
    assert again.created_at == clock()
    assert [n.details["renewal_date"] for n in notifier.items()] == ["2030-03-05", "2031-03-05"]


def test_entries_that_leave_the_portfolio_resolve_their_alerts(
    engine: Engine, alerts: AlertStore, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    add_entry(engine, "dropped.com", date(2030, 3, 5), clock())
    add_entry(engine, "removed.com", date(2030, 3, 5), clock())
    check(engine, notifier, clock)
    assert len(alerts.alerts()) == 2
    change_entry(engine, "dropped.com", status="dropped")
    remove_entry(engine, "removed.com")
    assert check(engine, notifier, clock) == counts(0)
    [dropped] = alerts.alerts(include_closed=True)  # the removed entry's went with it
    assert (dropped.domain, dropped.state) == ("dropped.com", "resolved")


def test_an_alert_left_unnotified_is_sent_by_the_next_check_once(
    engine: Engine, alerts: AlertStore, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    add_entry(engine, "crash.com", date(2030, 3, 5), clock())
    check(engine, notifier, clock)
    with engine.begin() as connection:  # as if the process died between commit and send
        connection.execute(update(renewal_alerts).values(notified_at=None))
    assert check(engine, notifier, clock) == counts(1, sent=1)
    assert check(engine, notifier, clock) == counts(1)
    assert notifier.events() == ["renewal.critical", "renewal.critical"]
    [alert] = alerts.alerts()
    assert alerts.claim_notice(alert.id, clock()) is False  # already notified


def test_acknowledging_an_unknown_alert_is_an_error(alerts: AlertStore, clock: FakeClock) -> None:
    with pytest.raises(AlertNotFoundError, match="no renewal alert with id 99"):
        alerts.acknowledge(99, clock())


def test_the_check_stops_between_entries_when_aborted(
    engine: Engine, alerts: AlertStore, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    add_entry(engine, "a.com", date(2030, 3, 5), clock())
    add_entry(engine, "b.com", date(2030, 3, 6), clock())
    stop = threading.Event()
    seen: list[str] = []

    def progress(done: int, total: int, domain: str) -> None:
        seen.append(domain)
        if done == 0:
            stop.set()  # a cancel arriving while a.com is checked

    with pytest.raises(JobAbortedError, match="after 1 of 2"):
        RenewalCheck(engine, notifier, ISSUE_THRESHOLDS, clock).run(stop, progress)
    assert seen == ["a.com"]
    assert [alert.domain for alert in alerts.alerts()] == ["a.com"]
