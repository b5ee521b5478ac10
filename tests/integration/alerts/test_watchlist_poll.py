"""WATCHLIST_POLL's poll against loopback DNS and RDAP servers, on SQLite and PostgreSQL: the
transitions registered → available (notified once) → registered (re-armed) → available
(notified again), the interval, dry runs, failed lookups, the RDAP pacing and aborts."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import Engine

from dominus.errors import JobAbortedError
from dominus.providers.models import DnsVerdict, StopSignal
from dominus.providers.rdap import HttpRdapClient
from dominus.providers.rdap_bootstrap import RdapBootstrap
from dominus.watchlist.poll import PollOptions, PollResult, WatchlistPoll
from dominus.watchlist.store import WatchlistStore
from tests.support.clock import FakeClock
from tests.support.fakes.drip_server import DripServer
from tests.support.fakes.rdap_server import bootstrap_doc
from tests.support.polling import outcome_within
from tests.support.watch_fixtures import RecordingNotifier, Registry

pytestmark = pytest.mark.backends("sqlite", "postgresql")


HOURS_6 = timedelta(hours=6)


@pytest.fixture
def registry() -> Iterator[Registry]:
    fake = Registry()
    yield fake
    fake.close()


@pytest.fixture
def watchlist(engine: Engine) -> WatchlistStore:
    return WatchlistStore(engine)


@pytest.fixture
def notifier() -> RecordingNotifier:
    return RecordingNotifier()


def poller(
    watchlist: WatchlistStore,
    registry: Registry,
    notifier: RecordingNotifier,
    clock: FakeClock,
    *,
    dry_run: bool = False,
    delay: float = 0.0,
) -> WatchlistPoll:
    options = PollOptions(interval=HOURS_6, rdap_delay_seconds=delay, dry_run=dry_run)
    return WatchlistPoll(watchlist, registry.dns, registry.rdap, notifier, options, clock)


def poll(
    watchlist: WatchlistStore,
    registry: Registry,
    notifier: RecordingNotifier,
    clock: FakeClock,
    **options: bool,
) -> PollResult:
    stop = threading.Event()
    return poller(watchlist, registry, notifier, clock, **options).run(stop)


def test_available_is_notified_once_and_rearmed_only_by_registered(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("gone.test", "client wants it", clock())
    registry.registered("gone.test")

    first = poll(watchlist, registry, notifier, clock)
    assert first.document() == {
        "checked": 1,
        "available": 0,
        "notified": 0,
        "drop_changes": 0,
        "errors": [],
        "dry_run": False,
    }
    entry = watchlist.get("gone.test")
    assert (entry.last_status, entry.notified, entry.last_checked_at) == (
        "registered",
        False,
        clock(),
    )
    # DNS settled it; RDAP is still asked, for the registry's drop statuses.
    assert registry.rdap_hits("gone.test") == 1

    registry.available("gone.test")
    clock.advance(HOURS_6.total_seconds())
    second = poll(watchlist, registry, notifier, clock)
    assert (second.checked, second.available, second.notified) == (1, 1, 1)
    [notification] = notifier.items()
    assert notification.event == "watchlist.available"
    assert notification.subject == "gone.test is available to register"
    assert notification.details["notes"] == "client wants it"
    assert notification.details["previous_status"] == "registered"
    entry = watchlist.get("gone.test")
    assert (entry.last_status, entry.notified, entry.notified_at) == ("available", True, clock())
    assert entry.last_status_change_at == clock()
    assert entry.last_detail is not None and "HTTP 404" in entry.last_detail

    changed_at = clock()
    clock.advance(HOURS_6.total_seconds())
    third = poll(watchlist, registry, notifier, clock)
    assert (third.available, third.notified) == (1, 0)  # still available: not notified again
    assert len(notifier.items()) == 1
    assert watchlist.get("gone.test").last_status_change_at == changed_at

    registry.registered_in_rdap_only("gone.test")  # taken again (no delegation yet)
    clock.advance(HOURS_6.total_seconds())
    fourth = poll(watchlist, registry, notifier, clock)
    assert (fourth.available, fourth.notified) == (0, 0)
    entry = watchlist.get("gone.test")
    assert (entry.last_status, entry.notified) == ("registered", False)  # re-armed

    registry.available("gone.test")
    clock.advance(HOURS_6.total_seconds())
    fifth = poll(watchlist, registry, notifier, clock)
    assert (fifth.available, fifth.notified) == (1, 1)
    assert notifier.events() == ["watchlist.available", "watchlist.available"]
    assert notifier.items()[1].details["previous_status"] == "registered"


def test_entries_checked_within_the_interval_are_skipped(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("early.test", None, clock())
    registry.registered("early.test")
    assert poll(watchlist, registry, notifier, clock).checked == 1
    late_checked_at = clock.advance(3600)
    watchlist.add("late.test", None, late_checked_at)
    registry.registered("late.test")
    assert poll(watchlist, registry, notifier, clock).checked == 1  # late.test only
    clock.advance(3 * 3600)
    assert poll(watchlist, registry, notifier, clock).checked == 0
    # A poll on the 6-hour schedule starting a little before the 6 hours are up still checks.
    clock.advance(2 * 3600 - 60)
    assert poll(watchlist, registry, notifier, clock).checked == 1  # early.test
    assert watchlist.get("early.test").last_checked_at == clock()
    assert watchlist.get("late.test").last_checked_at == late_checked_at  # 5 h ago: skipped


def test_a_dry_run_looks_up_and_reports_but_writes_and_sends_nothing(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("free.test", None, clock())
    watchlist.add("taken.test", None, clock())
    registry.available("free.test")
    registry.registered("taken.test")
    before = watchlist.entries()
    result = poll(watchlist, registry, notifier, clock, dry_run=True)
    assert result.document() == {
        "checked": 2,
        "available": 1,
        "notified": 1,
        "drop_changes": 0,
        "errors": [],
        "dry_run": True,
    }
    assert notifier.items() == []
    assert watchlist.entries() == before
    assert registry.rdap_hits("free.test") == 1  # it did look


def test_a_failed_lookup_is_an_error_that_neither_notifies_nor_rearms(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("flaky.test", None, clock())
    registry.available("flaky.test")
    assert poll(watchlist, registry, notifier, clock).notified == 1

    registry.broken("flaky.test")
    clock.advance(HOURS_6.total_seconds())
    result = poll(watchlist, registry, notifier, clock)
    [error] = result.errors
    assert error["domain"] == "flaky.test"
    assert "SERVFAIL" in error["error"] and "HTTP 503" in error["error"]
    assert (result.checked, result.available, result.notified) == (1, 0, 0)
    entry = watchlist.get("flaky.test")
    assert (entry.last_status, entry.notified) == ("available", True)  # last known stands
    assert entry.last_checked_at == clock()
    assert entry.last_detail == error["error"]

    registry.available("flaky.test")
    clock.advance(HOURS_6.total_seconds())
    assert poll(watchlist, registry, notifier, clock).notified == 0
    assert len(notifier.items()) == 1


def test_a_never_checked_entry_whose_lookup_fails_is_unknown(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("new.test", None, clock())
    registry.broken("new.test")
    assert len(poll(watchlist, registry, notifier, clock).errors) == 1
    assert watchlist.get("new.test").last_status == "unknown"


def test_racing_polls_notify_an_availability_once(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    entry = watchlist.add("race.test", None, clock())
    watchlist.record_check(entry, "available", "RDAP 404", clock())
    assert watchlist.claim_notification(entry.id, clock()) is True
    assert watchlist.claim_notification(entry.id, clock()) is False


class RecordingStop:
    """A stop signal that records how long the poll asked to wait, and never waits."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.flag = False

    def is_set(self) -> bool:
        return self.flag

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout or 0.0)
        return self.flag


def test_rdap_lookups_are_paced_by_the_delay(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    for name in ("a.test", "b.test", "c.test", "d.test"):
        watchlist.add(name, None, clock())
        registry.available(name)
    registry.registered("c.test")  # DNS decides, RDAP still asked for its statuses
    stop = RecordingStop()
    result = poller(watchlist, registry, notifier, clock, delay=30).run(stop)
    assert result.checked == 4
    assert len(stop.waits) == 3  # before the 2nd, 3rd and 4th RDAP lookups
    assert all(0 < wait <= 30 for wait in stop.waits)


def test_an_abort_while_pacing_stops_the_poll_between_lookups(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    for name in ("a.test", "b.test"):
        watchlist.add(name, None, clock())
        registry.available(name)
    stop = threading.Event()
    dns_check = registry.dns.check

    def check_then_abort(domain: str, stop_signal: StopSignal | None = None) -> DnsVerdict:
        verdict = dns_check(domain, stop_signal)
        if domain == "b.test":
            stop.set()  # a cancel arriving while the poll waits its turn for RDAP
        return verdict

    registry.dns.check = check_then_abort  # type: ignore[method-assign, assignment]
    with pytest.raises(JobAbortedError):
        poller(watchlist, registry, notifier, clock, delay=60).run(stop)
    assert watchlist.get("a.test").last_status == "available"
    assert watchlist.get("b.test").last_checked_at is None
    assert registry.rdap_hits("b.test") == 0
    assert len(notifier.items()) == 1


def test_an_abort_ends_an_rdap_lookup_in_flight(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    """A registry trickling its answer a byte a second, a lookup with all the time in the
    world: the cancel ends the lookup in flight, and the poll with it."""
    watchlist.add("drip.test", None, clock())
    registry.available("drip.test")  # DNS says NXDOMAIN, so RDAP is asked
    drip = DripServer(interval=1.0)
    bootstrap = RdapBootstrap.parse(bootstrap_doc(drip.url + "/rdap"))
    rdap = HttpRdapClient(bootstrap, registry.http, timeout_seconds=600, max_attempts=1)
    options = PollOptions(interval=HOURS_6, rdap_delay_seconds=0)
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    try:
        poll = WatchlistPoll(watchlist, registry.dns, rdap, notifier, options, clock)
        outcome = outcome_within(lambda: poll.run(stop))
        assert drip.request_count() == 1
    finally:
        drip.close()
    assert isinstance(outcome, JobAbortedError), outcome
    assert watchlist.get("drip.test").last_checked_at is None
    assert notifier.items() == []


def test_a_set_stop_signal_stops_before_the_first_entry(
    watchlist: WatchlistStore, registry: Registry, notifier: RecordingNotifier, clock: FakeClock
) -> None:
    watchlist.add("a.test", None, clock())
    stop = threading.Event()
    stop.set()
    with pytest.raises(JobAbortedError, match="after 0 of 1"):
        poller(watchlist, registry, notifier, clock).run(stop)
    assert watchlist.get("a.test").last_checked_at is None
