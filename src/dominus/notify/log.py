"""The notifier that is always on: one log line per notification (logger `dominus.notify`), at
the level its severity calls for, so a notification is never lost even with no webhook."""

from __future__ import annotations

import logging

from dominus.notify.model import Notification, Severity

log = logging.getLogger("dominus.notify")

_LEVELS = {
    Severity.INFO: logging.INFO,
    Severity.WARNING: logging.WARNING,
    Severity.CRITICAL: logging.ERROR,
}


class LogNotifier:
    def send(self, notification: Notification) -> bool:
        log.log(
            _LEVELS[notification.severity],
            "notification %s: %s",
            notification.event,
            notification.subject,
        )
        return True
