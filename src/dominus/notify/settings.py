"""The notification settings (`NotificationSettings`, a base class of `dominus.config.Settings`).

NOTIFY_WEBHOOK_URL unset: notifications are logged only. Set, it must be an http or https URL
with a host; a value set to nothing is refused rather than read as "no webhook", since that is
how an unset variable in a deployment template looks, and alerts about money would then vanish
without a word.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field

from dominus.errors import ConfigurationError
from dominus.settings_slice import SettingsSlice


class NotificationSettings(SettingsSlice):
    NOTIFY_WEBHOOK_URL: str | None = None
    # Bounds each attempt's whole exchange (connect, send, answer), not each read.
    NOTIFY_WEBHOOK_TIMEOUT_S: float = Field(default=5.0, ge=0.1, le=120.0, allow_inf_nan=False)
    # Retries after the first attempt (0: one attempt only).
    NOTIFY_WEBHOOK_RETRIES: int = Field(default=3, ge=0, le=10)


def check_notification_settings(settings: NotificationSettings) -> None:
    """ConfigurationError naming NOTIFY_WEBHOOK_URL and what is wrong with it. Checked here
    rather than by a field validator, whose message would repeat the value (and its secret)."""
    if settings.NOTIFY_WEBHOOK_URL is None:
        return
    try:
        check_webhook_url(settings.NOTIFY_WEBHOOK_URL)
    except ValueError as error:
        raise ConfigurationError(f"invalid settings: NOTIFY_WEBHOOK_URL: {error}") from None


def check_webhook_url(value: str) -> None:
    """ValueError saying what is wrong (never repeating a secret path or query)."""
    if not value.strip():
        raise ValueError("set but empty: give an http(s) URL or unset it")
    if value != value.strip() or any(ord(char) < 0x21 or ord(char) == 0x7F for char in value):
        raise ValueError("holds whitespace or a control character")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ValueError("not a URL") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("only http and https URLs are allowed")
    if not parts.hostname:
        raise ValueError("the URL has no host")
