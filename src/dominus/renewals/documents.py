"""The renewal alerts' JSON shape, `AlertOut`: what `dominus alerts list --json` prints and
`GET /api/v1/alerts` returns."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, cast

from pydantic import BaseModel, Field

from dominus.renewals.model import RenewalAlert

StateName = Literal["open", "acknowledged", "escalated", "resolved"]


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


class AlertOut(BaseModel):
    id: int
    domain: str
    type: Literal["past_due", "critical", "imminent"]
    severity: Literal["critical", "warning"]
    state: StateName = Field(
        description="open: needs someone; escalated: superseded by a more severe alert of the "
        "same renewal; resolved: the renewal is no longer due (renewed, or the entry left)."
    )
    renewal_date: str = Field(description="The renewal the alert is about (YYYY-MM-DD).")
    days_left: int = Field(description="UTC calendar days until the renewal, as last checked.")
    created_at: str
    escalated_at: str | None
    acknowledged_at: str | None
    notified_at: str | None
    resolved_at: str | None

    @classmethod
    def of(cls, alert: RenewalAlert) -> AlertOut:
        return cls(
            id=alert.id,
            domain=alert.domain,
            type=alert.type.value,
            severity=cast(Literal["critical", "warning"], alert.severity),
            state=cast(StateName, alert.state),
            renewal_date=alert.renewal_date.isoformat(),
            days_left=alert.days_left,
            created_at=alert.created_at.isoformat(),
            escalated_at=_iso(alert.escalated_at),
            acknowledged_at=_iso(alert.acknowledged_at),
            notified_at=_iso(alert.notified_at),
            resolved_at=_iso(alert.resolved_at),
        )
