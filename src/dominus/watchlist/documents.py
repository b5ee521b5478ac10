"""The watchlist's JSON shape, `WatchEntryOut`: what `dominus watchlist list --json` prints
and `GET /api/v1/watchlist` returns."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from dominus.watchlist.model import WatchEntry


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


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
        )
