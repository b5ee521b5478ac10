"""NOTIFY_* settings: checked at start-up, naming the variable, never repeating the URL."""

from __future__ import annotations

import pytest

from dominus.config import load_settings
from dominus.errors import ConfigurationError
from dominus.notify import CompositeNotifier, LogNotifier, WebhookNotifier, notifier_from_settings


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in ("NOTIFY_WEBHOOK_URL", "NOTIFY_WEBHOOK_TIMEOUT_S", "NOTIFY_WEBHOOK_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]


def test_without_a_webhook_notifications_are_logged_only() -> None:
    settings = load_settings()
    assert settings.NOTIFY_WEBHOOK_URL is None
    assert (settings.NOTIFY_WEBHOOK_TIMEOUT_S, settings.NOTIFY_WEBHOOK_RETRIES) == (5.0, 3)
    notifier = notifier_from_settings(settings)
    assert isinstance(notifier, CompositeNotifier)
    assert [type(one) for one in notifier.notifiers] == [LogNotifier]


def test_a_webhook_url_adds_the_webhook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTIFY_WEBHOOK_URL", "https://hooks.example.net/T0/secret")
    monkeypatch.setenv("NOTIFY_WEBHOOK_TIMEOUT_S", "2.5")
    monkeypatch.setenv("NOTIFY_WEBHOOK_RETRIES", "0")
    notifier = notifier_from_settings(load_settings())
    assert isinstance(notifier, CompositeNotifier)
    log, webhook = notifier.notifiers
    assert isinstance(log, LogNotifier) and isinstance(webhook, WebhookNotifier)
    assert webhook.target == "https://hooks.example.net"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("ftp://hooks.example.net/secret", "only http and https"),
        ("file:///etc/secret", "only http and https"),
        ("hooks.example.net/secret", "only http and https"),
        ("https:///secret", "no host"),
        ("", "set but empty"),
        ("https://hooks.example.net/a secret", "whitespace"),
        ("http://hooks.example.net:99999/secret", "not a URL"),
    ],
)
def test_a_bad_webhook_url_is_refused_naming_the_variable_not_the_value(
    monkeypatch: pytest.MonkeyPatch, value: str, reason: str
) -> None:
    monkeypatch.setenv("NOTIFY_WEBHOOK_URL", value)
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    assert "NOTIFY_WEBHOOK_URL" in raised.value.message
    assert reason in raised.value.message
    assert "secret" not in raised.value.message


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("NOTIFY_WEBHOOK_TIMEOUT_S", "0", "0.1..120.0"),
        ("NOTIFY_WEBHOOK_TIMEOUT_S", "nan", ""),
        ("NOTIFY_WEBHOOK_RETRIES", "11", "0..10"),
        ("NOTIFY_WEBHOOK_RETRIES", "-1", "0..10"),
    ],
)
def test_webhook_limits_are_checked(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, allowed: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    assert name in raised.value.message
    assert allowed in raised.value.message
