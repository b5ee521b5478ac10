"""Telling a person that something needs them: a name came free, a renewal is due, a job was
dead-lettered. One `Notifier` protocol; a log notifier (always on), a webhook notifier
(NOTIFY_WEBHOOK_URL) and a composite that sends to every configured one (ADR 0022)."""

from dominus.notify.composite import CompositeNotifier
from dominus.notify.log import LogNotifier
from dominus.notify.model import Notification, Notifier, Severity
from dominus.notify.setup import notifier_from_settings
from dominus.notify.webhook import WebhookNotifier

__all__ = [
    "CompositeNotifier",
    "LogNotifier",
    "Notification",
    "Notifier",
    "Severity",
    "WebhookNotifier",
    "notifier_from_settings",
]
