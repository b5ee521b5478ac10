"""Telling a person that something needs them: a name came free, a renewal is due, a job was
dead-lettered. One `Notifier` protocol; a log notifier (always on), a webhook notifier
(NOTIFY_WEBHOOK_URL) and a composite that sends to every configured one (ADR 0022)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dominus.lazy_exports import exported_from

if TYPE_CHECKING:
    from dominus.notify.composite import CompositeNotifier
    from dominus.notify.log import LogNotifier
    from dominus.notify.model import Notification, Notifier, Severity
    from dominus.notify.setup import notifier_from_settings
    from dominus.notify.webhook import WebhookNotifier

# Each name is imported on first use (dominus.lazy_exports says why).
__getattr__ = exported_from(
    {
        "dominus.notify.composite": ("CompositeNotifier",),
        "dominus.notify.log": ("LogNotifier",),
        "dominus.notify.model": ("Notification", "Notifier", "Severity"),
        "dominus.notify.setup": ("notifier_from_settings",),
        "dominus.notify.webhook": ("WebhookNotifier",),
    }
)

__all__ = [
    "CompositeNotifier",
    "LogNotifier",
    "Notification",
    "Notifier",
    "Severity",
    "WebhookNotifier",
    "notifier_from_settings",
]
