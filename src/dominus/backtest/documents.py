"""The backtest's JSON shapes: outcomes, the weights in force and the weight and threshold
versions, one pydantic model each, which the API returns and the CLI's `--json` dumps."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.pipeline.scoring_sets import VersionedSet
from dominus.portfolio.model import Outcome
from dominus.scoring.weighting import shares_of
from dominus.scoring.weights import Weights


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

    @classmethod
    def fields_of(cls, outcome: Outcome) -> dict[str, Any]:
        return {
            "id": outcome.id,
            "domain": outcome.domain,
            "type": outcome.type,
            "price": outcome.sale_price,
            "currency": outcome.currency,
            "date": outcome.date.isoformat(),
            "venue": outcome.venue,
            "fees": outcome.fees,
            "cost_basis": outcome.cost_basis,
            "notes": outcome.notes,
            "created_at": outcome.created_at.isoformat(),
        }

    @classmethod
    def of(cls, outcome: Outcome) -> OutcomeOut:
        return cls(**cls.fields_of(outcome))


class RecordedOutcomeOut(OutcomeOut):
    build_job_id: int | None = Field(
        description="The BACKTEST_BUILD that will read this sale (null: no sale with a price)."
    )

    @classmethod
    def recorded(cls, outcome: Outcome, build_job_id: int | None) -> RecordedOutcomeOut:
        return cls(**cls.fields_of(outcome), build_job_id=build_job_id)


class VersionedSetOut(BaseModel):
    """A weight set or a calibrated threshold set (`weights history --json`)."""

    model_config = ConfigDict(extra="forbid")

    version: int
    name: str
    values: dict[str, Any] = Field(description="The weights, or the thresholds.")
    source: str = Field(description="default, manual, tuned, calibrated or rollback.")
    notes: str | None
    created_at: str
    activated_at: str | None
    active: bool

    @classmethod
    def of(cls, row: VersionedSet, active_id: int | None) -> VersionedSetOut:
        return cls(
            version=row.id,
            name=row.name,
            values=row.values,
            source=row.source,
            notes=row.notes,
            created_at=row.created_at.isoformat(),
            activated_at=row.activated_at.isoformat() if row.activated_at else None,
            active=row.id == active_id,
        )


def _active(row: VersionedSet | None) -> VersionedSetOut | None:
    return None if row is None else VersionedSetOut.of(row, row.id)


class WeightsOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    weights: dict[str, float] = Field(description="The weights scoring uses now, shares of 1.")
    defaults: dict[str, float]
    source: str = Field(description="default, manual, tuned or rollback.")
    active: VersionedSetOut | None = Field(
        description="The active weight set; null: the built-in defaults."
    )

    @classmethod
    def of(cls, active: VersionedSet | None, current: Weights) -> WeightsOut:
        return cls(
            active=_active(active),
            weights=shares_of(current).to_dict(),
            defaults=Weights().to_dict(),
            source=active.source if active else "default",
        )


class ThresholdsOut(BaseModel):
    """`thresholds show --json`: the decision thresholds scoring uses now."""

    active: VersionedSetOut | None = Field(
        description="The active calibrated set; null: the SCORING_* settings alone."
    )
    values: dict[str, float]
    defaults: dict[str, float]

    @classmethod
    def of(
        cls, active: VersionedSet | None, values: dict[str, float], defaults: dict[str, float]
    ) -> ThresholdsOut:
        return cls(active=_active(active), values=values, defaults=defaults)
