"""Drop status on the watchlist against loopback DNS and RDAP servers, on SQLite and PostgreSQL:
the registry's statuses and dates kept, each change of phase notified once with its drop day,
a failed lookup leaving the last conclusive answer, and names you already hold flagged."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import Engine

from dominus.notify import Notifier, notifier_from_settings
from dominus.notify.settings import NotificationSettings
from dominus.watchlist.poll import PollOptions, PollResult, WatchlistPoll
from dominus.watchlist.store import WatchlistStore
from tests.support.clock import FakeClock
from tests.support.fakes.webhook_server import FakeWebhook
from tests.support.portfolio_rows import add_entry, change_entry
from tests.support.watch_fixtures import RecordingNotifier, Registry

pytestmark = pytest.mark.backends("sqlite", "postgresql")

HOURS_6 = timedelta(hours=6)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 12, 14, 20, 0, tzinfo=UTC))


@pytest.fixture
def registry() -> Iterator[Registry]:
    fake = Registry(tlds=("test", "com", "org"))
    yield fake
    fake.close()


@pytest.fixture
def watchlist(engine: Engine) -> WatchlistStore:
    return WatchlistStore(engine)


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


def poll(
    watchlist: WatchlistStore, registry: Registry, notifier: Notifier, clock: FakeClock
) -> PollResult:
    options = PollOptions(interval=HOURS_6, rdap_delay_seconds=0)
    poller = WatchlistPoll(watchlist, registry.dns, registry.rdap, notifier, options, clock)
    result = poller.run(threading.Event())
    clock.advance(HOURS_6.total_seconds())
    return result


def subjects(notifier: RecordingNotifier) -> list[str]:
    return [notification.subject for notification in notifier.items()]


def test_each_change_of_phase_is_notified_once_with_its_drop_day(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("example.com", "want it", clock())
    registry.in_status(
        "example.com", ["client transfer prohibited"], expires="2027-05-01", delegated=True
    )
    first = poll(watchlist, registry, notifier, clock)
    assert (first.notified, first.drop_changes) == (0, 0)  # an ordinary registered name
    entry = watchlist.get("example.com")
    assert (entry.last_status, entry.drop_phase, entry.statuses) == (
        "registered",
        "none",
        ("client transfer prohibited",),
    )
    assert entry.rdap_expires_on == date(2027, 5, 1)

    # EPP's camelCase, as some registries pass it through: read like RFC 9083's spelling.
    registry.in_status(
        "example.com", ["redemptionPeriod", "pendingDelete"], last_changed="2026-12-14"
    )
    second = poll(watchlist, registry, notifier, clock)
    assert (second.notified, second.drop_changes) == (1, 1)
    assert subjects(notifier) == ["example.com enters redemptionPeriod: drops about 2027-01-18"]
    entry = watchlist.get("example.com")
    assert (entry.drop_phase, entry.expected_drop_on, entry.rdap_last_changed_on) == (
        "redemption_period",
        date(2027, 1, 18),
        date(2026, 12, 14),
    )

    again = poll(watchlist, registry, notifier, clock)  # the same status: nothing to say
    assert (again.notified, again.drop_changes) == (0, 0)
    assert len(notifier.items()) == 1

    registry.in_status("example.com", ["pending delete"], last_changed="2027-01-13")
    clock.now = datetime(2027, 1, 14, 9, 0, tzinfo=UTC)
    assert poll(watchlist, registry, notifier, clock).drop_changes == 1
    [notice] = notifier.items()[1:]
    assert notice.subject == "example.com enters pendingDelete: drops about 2027-01-18"
    assert notice.event == "watchlist.drop_status"
    assert notice.details["previous_phase"] == "redemption_period"
    assert notice.details["statuses"] == ["pending delete"]
    assert notice.details["notes"] == "want it"

    registry.available("example.com")
    assert poll(watchlist, registry, notifier, clock).available == 1
    assert notifier.items()[-1].event == "watchlist.available"
    entry = watchlist.get("example.com")
    assert (entry.drop_phase, entry.statuses, entry.expected_drop_on) == (None, (), None)


def test_a_failed_rdap_lookup_leaves_the_last_drop_facts(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("example.org", None, clock())
    registry.in_status("example.org", ["pending delete"], last_changed="2026-12-13")
    assert poll(watchlist, registry, notifier, clock).drop_changes == 1
    assert subjects(notifier) == ["example.org is in pendingDelete: drops about 2026-12-18"]

    registry.rdap_broken_only("example.org")  # DNS: delegated; RDAP: 503
    result = poll(watchlist, registry, notifier, clock)
    assert (result.errors, result.notified) == ([], 0)  # DNS settled it: registered
    entry = watchlist.get("example.org")
    assert (entry.last_status, entry.drop_phase, entry.expected_drop_on) == (
        "registered",
        "pending_delete",
        date(2026, 12, 18),
    )
    assert entry.last_detail is not None and "HTTP 503" in entry.last_detail

    registry.broken("example.org")  # nothing answers: an error, the last answer stands
    assert len(poll(watchlist, registry, notifier, clock).errors) == 1
    assert watchlist.get("example.org").drop_phase == "pending_delete"

    registry.in_status("example.org", ["pending delete"], last_changed="2026-12-13")
    assert poll(watchlist, registry, notifier, clock).notified == 0  # no change: no repeat
    assert len(notifier.items()) == 1


def test_leaving_a_drop_phase_is_a_change_too(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("saved.com", None, clock())
    registry.in_status("saved.com", ["redemption period", "pending delete"])
    poll(watchlist, registry, notifier, clock)
    registry.in_status("saved.com", ["client transfer prohibited"], delegated=True)
    assert poll(watchlist, registry, notifier, clock).drop_changes == 1
    assert subjects(notifier)[-1] == (
        "saved.com left redemptionPeriod: renewed or restored, no drop expected"
    )
    assert poll(watchlist, registry, notifier, clock).notified == 0


def test_a_tld_outside_the_table_is_tracked_without_an_estimate(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("far.test", None, clock())
    registry.in_status("far.test", ["pending delete"], last_changed="2026-12-13")
    poll(watchlist, registry, notifier, clock)
    assert subjects(notifier) == [
        "far.test is in pendingDelete: no estimate: .test is not in the grace-period table"
    ]
    entry = watchlist.get("far.test")
    assert (entry.drop_phase, entry.expected_drop_on) == ("pending_delete", None)
    assert entry.drop_estimate == "no estimate: .test is not in the grace-period table"


def test_a_name_in_the_portfolio_is_flagged(
    engine: Engine, watchlist: WatchlistStore, clock: FakeClock
) -> None:
    add_entry(engine, "held.com", date(2027, 6, 1), clock())
    assert watchlist.add("held.com", None, clock()).in_portfolio is True
    assert watchlist.add("other.com", None, clock()).in_portfolio is False
    assert {entry.domain: entry.in_portfolio for entry in watchlist.entries()} == {
        "held.com": True,
        "other.com": False,
    }
    change_entry(engine, "held.com", status="sold")  # no longer held
    assert watchlist.get("held.com").in_portfolio is False


def test_a_poll_sends_its_changes_as_one_webhook_call(
    watchlist: WatchlistStore, registry: Registry, clock: FakeClock
) -> None:
    for name in ("a.com", "b.org", "c.test"):
        watchlist.add(name, None, clock())
    registry.in_status("a.com", ["pending delete"], last_changed="2026-12-13")
    registry.in_status("b.org", ["redemption period", "pending delete"])
    registry.available("c.test")
    webhook = FakeWebhook()
    try:
        notifier = notifier_from_settings(
            NotificationSettings(NOTIFY_WEBHOOK_URL=webhook.url, NOTIFY_WEBHOOK_RETRIES=0)
        )
        result = poll(watchlist, registry, notifier, clock)
        assert (result.notified, result.drop_changes) == (3, 2)
        [body] = webhook.bodies()
        again = poll(watchlist, registry, notifier, clock)
        assert again.notified == 0
        assert len(webhook.bodies()) == 1  # nothing new: no message at all
    finally:
        webhook.close()
    assert (body["event"], body["digest"], body["details"]) == (
        "watchlist.digest",
        True,
        {"count": 3},
    )
    assert [(item["event"], item["subject"]) for item in body["items"]] == [
        ("watchlist.drop_status", "a.com is in pendingDelete: drops about 2026-12-18"),
        ("watchlist.drop_status", "b.org is in redemptionPeriod: drops about 2027-01-18"),
        ("watchlist.available", "c.test is available to register"),
    ]
