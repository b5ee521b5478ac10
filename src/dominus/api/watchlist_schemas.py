"""Bodies of /api/v1/watchlist: the documents `dominus watchlist list --json` prints."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from dominus.watchlist.model import MAX_NOTES_LENGTH


class WatchEntryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str = Field(
        min_length=1,
        max_length=300,
        strict=True,
        description="The domain to watch (stage 1's rules; an invalid one is a 422 "
        "`invalid_domain`).",
    )
    notes: str | None = Field(
        default=None, max_length=MAX_NOTES_LENGTH, pattern="^[^\x00]*$", strict=True
    )


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
