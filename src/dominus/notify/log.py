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
        """One line, and for a digest one more line per item, each at its own level: the log
        keeps every alert readable on its own."""
        log.log(
            _LEVELS[notification.severity],
            "notification %s: %s",
            notification.event,
            notification.subject,
        )
        for item in notification.items or ():
            log.log(_LEVELS[item.severity], "  %s: %s", item.event, item.subject)
        return True
