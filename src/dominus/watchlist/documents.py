"""The watchlist's JSON shape, `WatchEntryOut`: what `dominus watchlist list --json` prints
and `GET /api/v1/watchlist` returns."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal, cast

from pydantic import BaseModel, Field

from dominus.watchlist.model import WatchEntry


def _iso(value: datetime | date | None) -> str | None:
    return None if value is None else value.isoformat()


DropPhaseName = Literal[
    "none", "auto_renew_period", "redemption_period", "pending_restore", "pending_delete"
]


class WatchEntryOut(BaseModel):
    id: int
    domain: str
    notes: str | None
    last_checked_at: str | None
    last_status: Literal["available", "registered", "unknown"] | None = Field(
        description="The last conclusive answer (a failed lookup leaves it as it was); null "
        "until the first poll."
    )
    last_detail: str | None = Field(description="What the last lookup said.")
    last_status_change_at: str | None
    notified: bool = Field(
        description="Its availability was notified; cleared when it is seen registered again."
    )
    notified_at: str | None
    created_at: str
    in_portfolio: bool = Field(
        description="The name is an active entry of your portfolio (you already hold it)."
    )
    rdap_statuses: list[str] = Field(
        description="The registry's status values from the last RDAP answer that listed them, "
        'in RFC 9083\'s spelling ("pending delete", "redemption period"); empty until then.'
    )
    rdap_expires_on: str | None = Field(description="The RDAP expiration event's date.")
    rdap_last_changed_on: str | None = Field(description="The RDAP last-changed event's date.")
    drop_phase: DropPhaseName | None = Field(
        description="What the statuses say about deletion; null until known."
    )
    drop_phase_since: str | None = Field(description="The first poll that saw this phase.")
    expected_drop_on: str | None = Field(
        description="The day it should drop, from its registry's grace periods (ADR 0047); "
        "null when there is no estimate (`drop_estimate` says why)."
    )
    drop_estimate: str | None = Field(description="How the drop day was reached, or why not.")
    drop_notified_phase: str | None
    drop_notified_at: str | None

    @classmethod
    def of(cls, entry: WatchEntry) -> WatchEntryOut:
        return cls(
            id=entry.id,
            domain=entry.domain,
            notes=entry.notes,
            last_checked_at=_iso(entry.last_checked_at),
            last_status=entry.last_status,
            last_detail=entry.last_detail,
            last_status_change_at=_iso(entry.last_status_change_at),
            notified=entry.notified,
            notified_at=_iso(entry.notified_at),
            created_at=entry.created_at.isoformat(),
            in_portfolio=entry.in_portfolio,
            rdap_statuses=list(entry.statuses),
            rdap_expires_on=_iso(entry.rdap_expires_on),
            rdap_last_changed_on=_iso(entry.rdap_last_changed_on),
            drop_phase=cast(DropPhaseName | None, entry.drop_phase),
            drop_phase_since=_iso(entry.drop_phase_since),
            expected_drop_on=_iso(entry.expected_drop_on),
            drop_estimate=entry.drop_estimate,
            drop_notified_phase=entry.drop_notified_phase,
            drop_notified_at=_iso(entry.drop_notified_at),
        )
