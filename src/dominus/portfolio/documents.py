"""The portfolio's JSON shapes: one pydantic model each, which the API returns and the CLI's
`--json` dumps. Closed models: a field that is not documented here fails validation instead of
slipping out."""

from __future__ import annotations

import datetime as dt
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dominus.portfolio.csv_import import ImportReport, RowProblem
from dominus.portfolio.model import (
    HistoryEvent,
    PortfolioEntry,
    TrademarkRisk,
    days_until_renewal,
)
from dominus.portfolio.renewal_prices import default_pricing, entry_renewal_price
from dominus.scoring.renewal_prices import RenewalPrice


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


class HistoryOut(BaseModel):
    """A verdict change, a sale or a drop of an entry."""

    model_config = ConfigDict(extra="forbid", validate_by_name=True, serialize_by_alias=True)

    kind: Literal["verdict", "sold", "dropped"]
    from_: str | None = Field(alias="from")
    to: str | None
    method: str | None
    reason: str
    at: str

    @classmethod
    def of(cls, event: HistoryEvent) -> HistoryOut:
        return cls(
            kind=event.kind,
            from_=event.old_verdict,
            to=event.new_verdict,
            method=event.method,
            reason=event.reason,
            at=event.at.isoformat(),
        )


class TrademarkOut(BaseModel):
    """The mark a held name matches (its last appraisal's trademark gate) and the gate's rule
    (exact, substring, edit_distance): a UDRP risk, flagged whatever the money says."""

    model_config = ConfigDict(extra="forbid")

    mark: str
    rule: str

    @classmethod
    def of(cls, risk: TrademarkRisk | None) -> TrademarkOut | None:
        return None if risk is None else cls(mark=risk.mark, rule=risk.rule)


class EntryOut(BaseModel):
    """A name held, with its verdict and the UTC calendar days until its renewal; `trademark`
    when its last appraisal matched a mark (null otherwise); `history` when one entry is asked
    for (null in listings)."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    tld: str
    status: Literal["active", "sold", "dropped"]
    renewal_date: date
    days_until_renewal: int
    acquired_at: date | None
    acquisition_cost: float | None
    renewal_cost: float | None = Field(
        description="The yearly renewal cost used for this name: your own figure, else a "
        "registrar's price, else the registry at-cost price (null: unknown)."
    )
    renewal_price_source: str = Field(
        description="Which price renewal_cost is, with its date and source (ADR 0046)."
    )
    renewals_paid: float
    currency: str
    registrar: str | None
    list_price: float | None
    current_score: float | None
    expected_value: float | None
    confidence: float | None
    suggested_list_price: float | None
    trademark: TrademarkOut | None
    verdict: Literal["keep", "drop", "reprice"] | None
    verdict_reason: str | None
    verdict_at: str | None
    scored_at: str | None
    score_details: dict[str, Any] | None
    notes: str | None
    created_at: str
    updated_at: str
    history: list[HistoryOut] | None = None
    auto_renew: bool | None = Field(
        default=None, description="What the registrar's export says; null: not known."
    )
    registrar_status: str | None = Field(
        default=None, description="The registrar's status for the name, e.g. `Expired`."
    )
    expired_at_registrar: bool = Field(
        default=False, description="The registrar status says the name has expired."
    )

    @classmethod
    def of(
        cls,
        entry: PortfolioEntry,
        now: datetime,
        history: list[HistoryEvent] | None = None,
        renewal: RenewalPrice | None = None,
    ) -> EntryOut:
        """`renewal`: the price the service chose (default: looked up with the bundled tables)."""
        renewal = renewal or entry_renewal_price(entry, default_pricing())
        return cls(
            domain=entry.domain,
            tld=entry.tld,
            status=entry.status,
            renewal_date=entry.renewal_date,
            days_until_renewal=days_until_renewal(entry.renewal_date, now),
            acquired_at=entry.acquired_at,
            acquisition_cost=entry.acquisition_cost,
            renewal_cost=renewal.amount,
            renewal_price_source=renewal.source,
            renewals_paid=entry.renewals_paid,
            currency=entry.currency,
            registrar=entry.registrar,
            list_price=entry.list_price,
            current_score=entry.current_score,
            expected_value=entry.expected_value,
            confidence=entry.confidence,
            suggested_list_price=entry.suggested_list_price,
            trademark=TrademarkOut.of(entry.trademark),
            verdict=entry.verdict,
            verdict_reason=entry.verdict_reason,
            verdict_at=_iso(entry.verdict_at),
            scored_at=_iso(entry.scored_at),
            score_details=entry.score_details,
            notes=entry.notes,
            created_at=entry.created_at.isoformat(),
            updated_at=entry.updated_at.isoformat(),
            history=None if history is None else [HistoryOut.of(event) for event in history],
            auto_renew=entry.auto_renew,
            registrar_status=entry.registrar_status,
            expired_at_registrar=entry.expired_at_registrar,
        )


class ImportProblemOut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    line: int
    column: str | None
    error: str

    @classmethod
    def of(cls, problem: RowProblem) -> ImportProblemOut:
        return cls(line=problem.line, column=problem.column, error=problem.error)


class ImportReportOut(BaseModel):
    """What an import added, updated, left unchanged, refused and skipped."""

    model_config = ConfigDict(extra="forbid")

    dry_run: bool
    added: list[str]
    updated: list[dict[str, Any]]
    unchanged: list[str]
    refused: list[ImportProblemOut]
    skipped: list[dict[str, Any]]
    columns: dict[str, str] = Field(
        default_factory=dict, description="Each field read, and the column that fed it."
    )
    ignored_columns: list[str] = Field(
        default_factory=list, description="The file's columns no field reads."
    )

    @classmethod
    def of(cls, report: ImportReport) -> ImportReportOut:
        return cls(
            dry_run=report.dry_run,
            added=report.added,
            updated=report.updated,
            unchanged=report.unchanged,
            refused=[ImportProblemOut.of(problem) for problem in report.refused],
            skipped=report.skipped,
            columns=report.columns,
            ignored_columns=report.ignored,
        )


class RescoreQueuedOut(BaseModel):
    """The PORTFOLIO_RESCORE job enqueued (`POST /portfolio/rescore`, `portfolio rescore
    --json` without --sync or --wait), and whether it is a new one (false: one for that scope
    was already pending or running)."""

    job_id: int
    created: bool


class LedgerSaleOut(BaseModel):
    """An entry closed as sold (`POST /portfolio/{domain}/sold`, `portfolio sold --json`):
    realised profit = price − fees − cost (acquisition + renewals paid); `build_job_id` is the
    BACKTEST_BUILD that will read the sale (`build_created` false: one was already pending)."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    type: Literal["sold"]
    date: dt.date
    price: float
    fees: float
    # Null without an acquisition cost: unknown, never counted as $0.
    cost: float | None
    realised_profit: float | None
    cost_unknown: bool
    currency: str
    venue: str | None
    build_job_id: int | None
    build_created: bool


class LedgerDropOut(BaseModel):
    """An entry closed as dropped (`POST /portfolio/{domain}/drop`, `portfolio drop --json`):
    what was sunk into it is lost."""

    model_config = ConfigDict(extra="forbid")

    domain: str
    type: Literal["dropped"]
    date: dt.date
    # Null without an acquisition cost: unknown, never counted as $0.
    sunk_cost: float | None
    realised_profit: float | None
    cost_unknown: bool
    currency: str
