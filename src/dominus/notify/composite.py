"""Sends each notification to every configured notifier."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from dominus.notify.model import Notification, Notifier

log = logging.getLogger("dominus.notify")


class CompositeNotifier:
    def __init__(self, notifiers: Sequence[Notifier]) -> None:
        self.notifiers = tuple(notifiers)

    def send(self, notification: Notification) -> bool:
        """Every notifier is tried, whatever the others did; True if any delivered it."""
        delivered = False
        for notifier in self.notifiers:
            try:
                delivered = notifier.send(notification) or delivered
            except Exception:
                log.exception("notifier %s failed", type(notifier).__name__)
        return delivered
