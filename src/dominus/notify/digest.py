"""A run's notifications gathered into one message: the jobs that raise several at once
(RENEWAL_CHECK, WATCHLIST_POLL) send one digest per run instead of one webhook call each."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dominus.notify.model import Notification, Notifier, Severity

_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.CRITICAL: 2}
# The subject names this many items; the rest are counted ("and 3 more").
SUBJECT_NAMES = 5


def digest(event: str, what: str, items: Sequence[Notification], at: datetime) -> Notification:
    """One notification standing for `items` (at least one), as severe as the most severe.
    `what` names the items in the subject ("renewal alert" → "3 renewal alerts: ...")."""
    if not items:
        raise ValueError("a digest needs at least one item")
    severity = max((item.severity for item in items), key=_SEVERITY_RANK.__getitem__)
    names = [str(item.details.get("domain", item.event)) for item in items[:SUBJECT_NAMES]]
    more = len(items) - len(names)
    listed = ", ".join(names) + (f" and {more} more" if more else "")
    plural = "" if len(items) == 1 else "s"
    return Notification(
        event=event,
        severity=severity,
        subject=f"{len(items)} {what}{plural}: {listed}",
        at=at,
        details={"count": len(items)},
        items=tuple(items),
    )


class DigestCollector:
    """Gathers one run's notifications; `send` delivers them as one digest (nothing when there
    are none) and forgets them, so a run that stops early can still send what it gathered."""

    def __init__(self, notifier: Notifier, event: str, what: str) -> None:
        self._notifier = notifier
        self._event = event
        self._what = what
        self.items: list[Notification] = []

    def add(self, notification: Notification) -> None:
        self.items.append(notification)

    def send(self, at: datetime) -> int:
        """The number of items sent (0: no message)."""
        items, self.items = self.items, []
        if items:
            self._notifier.send(digest(self._event, self._what, items, at))
        return len(items)
