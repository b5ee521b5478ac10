"""The request body of /api/v1/watchlist; a watched domain is `WatchEntryOut` of
`dominus.watchlist.documents`, which `dominus watchlist list --json` dumps."""

from __future__ import annotations

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
