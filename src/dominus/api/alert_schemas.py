"""Bodies of /api/v1/alerts: the documents `dominus alerts list --json` prints."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class AlertOut(BaseModel):
    id: int
    domain: str
    type: Literal["past_due", "critical", "imminent"]
    severity: Literal["critical", "warning"]
    state: Literal["open", "acknowledged", "escalated", "resolved"] = Field(
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
