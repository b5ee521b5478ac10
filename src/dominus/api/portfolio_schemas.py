"""The portfolio endpoints' request bodies; entries, import reports and the rescore answer are
the models of `dominus.portfolio.documents`, which the CLI's `--json` dumps."""

from __future__ import annotations

import datetime as dt
from datetime import date

from pydantic import BaseModel, ConfigDict, Field

from dominus.portfolio.model import MAX_AMOUNT, NO_NUL, EntryValues, Number


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


class SaleIn(BaseModel):
    """A sale of an entry: what the buyer paid, the fees (default 0), the day (default today,
    UTC; never after today) and where it sold."""

    model_config = ConfigDict(extra="forbid")

    price: Number = Field(ge=0, le=MAX_AMOUNT, allow_inf_nan=False)
    fees: Number = Field(default=0.0, ge=0, le=MAX_AMOUNT, allow_inf_nan=False)
    date: dt.date | None = None
    venue: str | None = Field(default=None, max_length=200, pattern=NO_NUL)


class DropIn(BaseModel):
    """A drop of an entry (not renewed): the day (default today, UTC; never after today)."""

    model_config = ConfigDict(extra="forbid")

    date: dt.date | None = None
