"""The portfolio endpoints' request bodies; entries, import reports and the rescore answer are
the models of `dominus.portfolio.documents`, which the CLI's `--json` dumps."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from dominus.portfolio.model import NO_NUL, EntryValues


class EntryPatchIn(EntryValues):
    """Fields to change; a field left out (or null) keeps its value. (Their bounds are the
    portfolio's own, shared with the command line and the CSV import.)"""


class EntryIn(EntryPatchIn):
    """A new entry: the domain and its renewal date are required."""

    domain: str = Field(min_length=1, max_length=300, pattern=NO_NUL)
    renewal_date: date


class RescoreIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str | None = Field(default=None, min_length=1, max_length=300, pattern=NO_NUL)
