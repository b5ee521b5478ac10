"""The renewal clock, the alert types and an alert as read from its row."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from dominus.errors import NotFoundError


class AlertType(StrEnum):
    IMMINENT = "imminent"
    CRITICAL = "critical"
    PAST_DUE = "past_due"

    @property
    def rank(self) -> int:
        """Escalation order: imminent → critical → past due."""
        return _RANKS[self]

    @property
    def severity(self) -> str:
        return "warning" if self is AlertType.IMMINENT else "critical"


_RANKS = {AlertType.IMMINENT: 1, AlertType.CRITICAL: 2, AlertType.PAST_DUE: 3}


@dataclass(frozen=True)
class Thresholds:
    critical_days: int  # RENEWAL_CRITICAL_DAYS
    warning_days: int  # RENEWAL_WARNING_DAYS


def alert_type(days_left: int, thresholds: Thresholds) -> AlertType | None:
    """Past due at 0 days or fewer, critical within the critical days, imminent within the
    warning days, otherwise no alert."""
    if days_left <= 0:
        return AlertType.PAST_DUE
    if days_left <= thresholds.critical_days:
        return AlertType.CRITICAL
    if days_left <= thresholds.warning_days:
        return AlertType.IMMINENT
    return None


@dataclass(frozen=True)
class RenewalAlert:
    id: int
    entry_id: int
    domain: str
    type: AlertType
    severity: str
    renewal_date: date
    days_left: int
    created_at: datetime
    updated_at: datetime
    escalated_at: datetime | None
    acknowledged_at: datetime | None
    notified_at: datetime | None
    resolved_at: datetime | None

    @property
    def state(self) -> str:
        """open (needs someone), acknowledged, escalated (superseded by a more severe alert
        of the same renewal) or resolved (the renewal is no longer due)."""
        if self.resolved_at is not None:
            return "resolved"
        if self.escalated_at is not None:
            return "escalated"
        if self.acknowledged_at is not None:
            return "acknowledged"
        return "open"


class AlertNotFoundError(NotFoundError):
    """No renewal alert with that id."""


@dataclass(frozen=True)
class EntryOutcome:
    """What one entry's check did: the alert it created or re-armed (None: none), and whether
    that was an escalation of a less severe alert of the same renewal."""

    alert_id: int | None = None
    escalated_from: AlertType | None = None
