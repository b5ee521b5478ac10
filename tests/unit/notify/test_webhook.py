"""The webhook notifier against a real HTTP server on a loopback port."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from dominus.notify import (
    CompositeNotifier,
    LogNotifier,
    Notification,
    Severity,
    WebhookNotifier,
)
from tests.support.fakes.drip_server import DripServer
from tests.support.fakes.webhook_server import Answer, FakeWebhook
from tests.support.polling import outcome_within

AT = datetime(2030, 3, 1, 23, 59, 30, tzinfo=UTC)
NOTE = Notification(
    event="watchlist.available",
    severity=Severity.WARNING,
    subject="cloudnest.com is available",
    at=AT,
    details={"domain": "cloudnest.com"},
)


@pytest.fixture
def webhook() -> Iterator[FakeWebhook]:
    fake = FakeWebhook()
    yield fake
    fake.close()


def notifier(
    url: str, sleeps: list[float], retries: int = 3, timeout: float = 5
) -> WebhookNotifier:
    return WebhookNotifier(
        url, timeout_seconds=timeout, retries=retries, backoff_seconds=0.5, sleep=sleeps.append
    )


def test_a_notification_is_posted_as_json(webhook: FakeWebhook) -> None:
    sleeps: list[float] = []
    assert notifier(webhook.url, sleeps).send(NOTE) is True
    [request] = webhook.requests
    assert request["path"] == "/hooks/secret-token"
    assert request["headers"]["content-type"] == "application/json"
    assert request["headers"]["user-agent"].startswith("dominus/")
    assert request["body"] == {
        "source": "dominus",
        "event": "watchlist.available",
        "severity": "warning",
        "subject": "cloudnest.com is available",
        "at": "2030-03-01T23:59:30+00:00",
        "details": {"domain": "cloudnest.com"},
        "digest": False,  # a single notification, not a run's digest
    }
    assert sleeps == []


def test_server_errors_are_retried_with_a_doubling_backoff(webhook: FakeWebhook) -> None:
    webhook.answers = [(503, 0.0), (500, 0.0), (429, 0.0), (200, 0.0)]
    sleeps: list[float] = []
    assert notifier(webhook.url, sleeps).send(NOTE) is True
    assert len(webhook.requests) == 4
    assert all(body == NOTE.document() for body in webhook.bodies())
    assert sleeps == [0.5, 1.0, 2.0]


def test_a_failing_webhook_gives_up_after_the_retries_and_never_raises(
    webhook: FakeWebhook, caplog: pytest.LogCaptureFixture
) -> None:
    webhook.answers = [(500, 0.0)]
    sleeps: list[float] = []
    with caplog.at_level(logging.WARNING, logger="dominus.notify"):
        assert notifier(webhook.url, sleeps, retries=2).send(NOTE) is False
    assert len(webhook.requests) == 3  # the first attempt and two retries
    errors = [record for record in caplog.records if record.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "not delivered after 3 attempt(s): HTTP 500" in errors[0].getMessage()
    # The URL's path may be a secret: the logs name the scheme and host only.
    assert all("secret-token" not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("status", [400, 401, 404, 302])
def test_answers_a_retry_cannot_change_are_not_retried(webhook: FakeWebhook, status: int) -> None:
    webhook.answers = [(status, 0.0), (200, 0.0)]
    sleeps: list[float] = []
    assert notifier(webhook.url, sleeps).send(NOTE) is False
    assert len(webhook.requests) == 1
    assert sleeps == []


def test_a_webhook_slower_than_the_timeout_counts_as_a_failed_attempt(
    webhook: FakeWebhook,
) -> None:
    slow: Answer = (200, 1.0)
    webhook.answers = [slow, (200, 0.0)]
    sleeps: list[float] = []
    assert notifier(webhook.url, sleeps, timeout=0.2).send(NOTE) is True
    assert len(webhook.requests) == 2
    assert sleeps == [0.5]


def test_a_webhook_trickling_its_answer_is_cut_off_at_the_timeout() -> None:
    """One byte a second never lets a read time out; NOTIFY_WEBHOOK_TIMEOUT_S bounds each
    attempt's whole exchange all the same (the answer takes the server 38 s)."""
    drip = DripServer(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", interval=1.0)
    sleeps: list[float] = []
    try:
        hook = notifier(drip.url + "/hooks/secret-token", sleeps, retries=1, timeout=2)
        outcome = outcome_within(lambda: hook.send(NOTE))
        assert drip.request_count() == 2
    finally:
        drip.close()
    assert outcome is False
    assert sleeps == [0.5]


def test_nothing_listening_is_a_failure_not_an_exception() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    url = f"http://127.0.0.1:{port}/hook"
    assert notifier(url, sleeps, retries=1).send(NOTE) is False
    assert sleeps == [0.5]


def test_the_backoff_is_capped() -> None:
    hook = WebhookNotifier("http://127.0.0.1:9/", timeout_seconds=1, retries=10)
    assert [hook.delay_before(attempt) for attempt in (2, 3, 4, 7, 11)] == [
        0.5,
        1.0,
        2.0,
        10.0,
        10.0,
    ]


def test_the_composite_sends_to_every_notifier_even_when_one_breaks(
    webhook: FakeWebhook, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def send(self, notification: Notification) -> bool:
            raise RuntimeError("broken channel")

    sleeps: list[float] = []
    composite = CompositeNotifier([Broken(), LogNotifier(), notifier(webhook.url, sleeps)])
    with caplog.at_level(logging.INFO, logger="dominus.notify"):
        assert composite.send(NOTE) is True
    assert webhook.bodies() == [NOTE.document()]
    assert any("cloudnest.com is available" in record.getMessage() for record in caplog.records)
    assert any("Broken failed" in record.getMessage() for record in caplog.records)


def test_the_composite_reports_undelivered_when_no_notifier_delivered(
    webhook: FakeWebhook,
) -> None:
    webhook.answers = [(500, 0.0)]
    sleeps: list[float] = []
    assert CompositeNotifier([notifier(webhook.url, sleeps, retries=0)]).send(NOTE) is False
