"""A digest: one notification standing for several, its webhook body (the `digest` flag and
the items), its subject and severity, and the log's line per item."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from dominus.notify import LogNotifier, Notification, Severity
from dominus.notify.digest import DigestCollector, digest
from tests.support.watch_fixtures import RecordingNotifier

AT = datetime(2030, 3, 1, 8, 0, 2, tzinfo=UTC)


def item(domain: str, severity: Severity = Severity.WARNING) -> Notification:
    return Notification(
        event="renewal.imminent",
        severity=severity,
        subject=f"{domain} renews soon",
        at=AT,
        details={"domain": domain, "renewal_cost": 12.5},
    )


def test_the_body_says_it_is_a_digest_and_lists_its_items() -> None:
    body = digest("renewal.digest", "renewal alert", [item("a.com"), item("b.com")], AT).document()
    assert body == {
        "source": "dominus",
        "event": "renewal.digest",
        "severity": "warning",
        "subject": "2 renewal alerts: a.com, b.com",
        "at": "2030-03-01T08:00:02+00:00",
        "details": {"count": 2},
        "digest": True,
        "items": [
            {
                "event": "renewal.imminent",
                "severity": "warning",
                "subject": f"{name} renews soon",
                "details": {"domain": name, "renewal_cost": 12.5},
            }
            for name in ("a.com", "b.com")
        ],
    }
    assert item("a.com").document()["digest"] is False
    assert "items" not in item("a.com").document()


def test_a_digest_is_as_severe_as_its_worst_item_and_names_a_few() -> None:
    items = [item(f"n{index}.com") for index in range(7)] + [item("x.com", Severity.CRITICAL)]
    one = digest("renewal.digest", "renewal alert", items, AT)
    assert one.severity is Severity.CRITICAL
    assert one.subject == "8 renewal alerts: n0.com, n1.com, n2.com, n3.com, n4.com and 3 more"
    single = digest("watchlist.digest", "watchlist change", [item("a.com")], AT)
    assert single.subject == "1 watchlist change: a.com"
    with pytest.raises(ValueError):
        digest("renewal.digest", "renewal alert", [], AT)


def test_the_collector_sends_one_message_or_none() -> None:
    notifier = RecordingNotifier()
    collector = DigestCollector(notifier, "renewal.digest", "renewal alert")
    assert collector.send(AT) == 0
    assert notifier.sent == []
    for name in ("a.com", "b.com", "c.com"):
        collector.add(item(name))
    assert collector.send(AT) == 3
    [sent] = notifier.sent
    assert sent.is_digest and [i.details["domain"] for i in notifier.items()] == [
        "a.com",
        "b.com",
        "c.com",
    ]
    assert collector.send(AT) == 0  # forgotten once sent
    assert len(notifier.sent) == 1


def test_the_log_keeps_a_line_per_item(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="dominus.notify")
    items = [item("a.com"), item("b.com", Severity.CRITICAL)]
    LogNotifier().send(digest("renewal.digest", "renewal alert", items, AT))
    assert [(record.levelno, record.getMessage()) for record in caplog.records] == [
        (logging.ERROR, "notification renewal.digest: 2 renewal alerts: a.com, b.com"),
        (logging.WARNING, "  renewal.imminent: a.com renews soon"),
        (logging.ERROR, "  renewal.imminent: b.com renews soon"),
    ]
