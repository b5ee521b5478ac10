"""Response bodies of the outcomes, backtest and weights endpoints."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class OutcomeOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    domain: str
    type: str = Field(description="sold, dropped or expired.")
    price: float | None
    currency: str | None
    date: str = Field(description="YYYY-MM-DD.")
    venue: str | None
    fees: float | None
    cost_basis: float | None = Field(description="Set by the portfolio ledger on a close.")
    notes: str | None
    created_at: str


class RecordedOutcomeOut(OutcomeOut):
    build_job_id: int | None = Field(
        description="The BACKTEST_BUILD that will read this sale (null: no sale with a price)."
    )


class WeightsOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    weights: dict[str, float] = Field(description="The weights scoring uses now, shares of 1.")
    defaults: dict[str, float]
    source: str = Field(description="default, manual, tuned or rollback.")
    active: dict[str, Any] | None = Field(
        description="The active weight set (version, name, values, source, notes, createdAt, "
        "activatedAt); null: the built-in defaults."
    )
