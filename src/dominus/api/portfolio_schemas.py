"""The portfolio endpoints' request and response bodies (closed models: an undocumented field
fails validation instead of slipping out)."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

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


class RescoreAccepted(BaseModel):
    jobId: int  # noqa: N815
    created: bool


class HistoryOut(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: Literal["verdict", "sold", "dropped"]
    from_: str | None = Field(alias="from")
    to: str | None
    method: str | None
    reason: str
    at: str


class EntryOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    tld: str
    status: Literal["active", "sold", "dropped"]
    renewal_date: date
    days_until_renewal: int
    acquired_at: date | None
    acquisition_cost: float | None
    renewal_cost: float | None
    renewals_paid: float
    currency: str
    registrar: str | None
    list_price: float | None
    current_score: float | None
    expected_value: float | None
    confidence: float | None
    suggested_list_price: float | None
    verdict: Literal["keep", "drop", "reprice"] | None
    verdict_reason: str | None
    verdict_at: str | None
    scored_at: str | None
    score_details: dict[str, Any] | None
    notes: str | None
    created_at: str
    updated_at: str
    history: list[HistoryOut] | None = None


class ImportProblemOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    line: int
    column: str | None
    error: str


class ImportReportOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dryRun: bool  # noqa: N815
    added: list[str]
    updated: list[dict[str, Any]]
    unchanged: list[str]
    refused: list[ImportProblemOut]
    skipped: list[dict[str, Any]]
