"""What a notification is, and what every notifier does with one."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


@dataclass(frozen=True)
class Notification:
    """One message. `event` is a stable machine name a receiver can route on
    (`renewal.digest` and `watchlist.digest`, whose items are `renewal.imminent`,
    `renewal.critical`, `renewal.past_due`, `watchlist.available`, `watchlist.drop_status`;
    `job.dead_lettered`); `subject` is one line a person reads; `details` is JSON-able."""

    event: str
    severity: Severity
    subject: str
    at: datetime
    details: dict[str, Any] = field(default_factory=dict)
    # A digest's items (`digest()`): one message standing for several. None: a single one.
    items: tuple[Notification, ...] | None = None

    @property
    def is_digest(self) -> bool:
        return self.items is not None

    def document(self) -> dict[str, Any]:
        """The JSON body a webhook receives. `digest` says whether it stands for several;
        a digest lists them in `items`, each as `{event, severity, subject, details}`."""
        body: dict[str, Any] = {
            "source": "dominus",
            "event": self.event,
            "severity": self.severity.value,
            "subject": self.subject,
            "at": self.at.astimezone(UTC).isoformat(),
            "details": self.details,
            "digest": self.is_digest,
        }
        if self.items is not None:
            body["items"] = [item.item_document() for item in self.items]
        return body

    def item_document(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "severity": self.severity.value,
            "subject": self.subject,
            "details": self.details,
        }


class Notifier(Protocol):
    def send(self, notification: Notification) -> bool:
        """Deliver the notification. Returns whether it was delivered; never raises (a
        notifier's failure is logged and must never fail the job that sent it)."""
        ...
