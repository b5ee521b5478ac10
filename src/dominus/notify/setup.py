"""From the settings to the process's notifier: the log always, the webhook when configured."""

from __future__ import annotations

from dominus.notify.composite import CompositeNotifier
from dominus.notify.log import LogNotifier
from dominus.notify.model import Notifier
from dominus.notify.settings import NotificationSettings
from dominus.notify.webhook import WebhookNotifier


def notifier_from_settings(settings: NotificationSettings) -> Notifier:
    notifiers: list[Notifier] = [LogNotifier()]
    if settings.NOTIFY_WEBHOOK_URL is not None:
        notifiers.append(
            WebhookNotifier(
                settings.NOTIFY_WEBHOOK_URL,
                timeout_seconds=settings.NOTIFY_WEBHOOK_TIMEOUT_S,
                retries=settings.NOTIFY_WEBHOOK_RETRIES,
            )
        )
    return CompositeNotifier(notifiers)
