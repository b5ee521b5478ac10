"""Typed reads of the portfolio's rows: entries, their verdict history and outcomes.

Writes live beside the features that make them (the service, the importer, the ledger); these
reads are what other parts (renewal alerts, the backtest) rely on."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from sqlalchemy import Connection, Engine, select

from dominus.db.errors import database_errors
from dominus.schema.tables import outcomes, portfolio_entries, portfolio_verdict_history

EntryStatus = Literal["active", "sold", "dropped"]
Verdict = Literal["keep", "drop", "reprice"]
OutcomeType = Literal["sold", "dropped", "expired"]


@dataclass(frozen=True)
class PortfolioEntry:
    id: int
    domain: str
    tld: str
    acquired_at: date | None
    renewal_date: date
    acquisition_cost: float | None
    renewal_cost: float | None
    currency: str
    registrar: str | None
    current_score: float | None
    expected_value: float | None
    confidence: float | None
    suggested_list_price: float | None
    list_price: float | None
    score_details: dict[str, Any] | None
    verdict: Verdict | None
    verdict_reason: str | None
    verdict_at: datetime | None
    scored_at: datetime | None
    notes: str | None
    status: EntryStatus
    renewals_paid: float
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class HistoryEvent:
    id: int
    entry_id: int
    domain: str
    kind: Literal["verdict", "sold", "dropped"]
    old_verdict: Verdict | None
    new_verdict: Verdict | None
    method: str | None
    reason: str
    at: datetime


@dataclass(frozen=True)
class Outcome:
    id: int
    domain: str
    type: OutcomeType
    sale_price: float | None
    currency: str | None
    date: date
    venue: str | None
    fees: float | None
    cost_basis: float | None
    notes: str | None
    created_at: datetime


def entry_of(row: Any) -> PortfolioEntry:
    return PortfolioEntry(
        **{column.name: row._mapping[column.name] for column in portfolio_entries.c}
    )


def history_event_of(row: Any) -> HistoryEvent:
    return HistoryEvent(
        **{column.name: row._mapping[column.name] for column in portfolio_verdict_history.c}
    )


def outcome_of(row: Any) -> Outcome:
    return Outcome(**{column.name: row._mapping[column.name] for column in outcomes.c})


def read_entry(connection: Connection, domain: str) -> PortfolioEntry | None:
    row = connection.execute(
        select(portfolio_entries).where(portfolio_entries.c.domain == domain)
    ).first()
    return None if row is None else entry_of(row)


def read_entries(
    connection: Connection, *, status: EntryStatus | None = "active"
) -> list[PortfolioEntry]:
    """Entries ordered by renewal date then domain; `status=None`: every entry."""
    query = select(portfolio_entries).order_by(
        portfolio_entries.c.renewal_date, portfolio_entries.c.domain
    )
    if status is not None:
        query = query.where(portfolio_entries.c.status == status)
    return [entry_of(row) for row in connection.execute(query)]


def read_history(connection: Connection, domain: str | None = None) -> list[HistoryEvent]:
    query = select(portfolio_verdict_history).order_by(portfolio_verdict_history.c.id)
    if domain is not None:
        query = query.where(portfolio_verdict_history.c.domain == domain)
    return [history_event_of(row) for row in connection.execute(query)]


def read_outcomes(connection: Connection, domain: str | None = None) -> list[Outcome]:
    query = select(outcomes).order_by(outcomes.c.date, outcomes.c.id)
    if domain is not None:
        query = query.where(outcomes.c.domain == domain)
    return [outcome_of(row) for row in connection.execute(query)]


class PortfolioReader:
    """The reads above, each in its own connection, with database errors in DOMINUS's words."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get_entry(self, domain: str) -> PortfolioEntry | None:
        with database_errors(), self.engine.connect() as connection:
            return read_entry(connection, domain)

    def list_entries(self, *, status: EntryStatus | None = "active") -> list[PortfolioEntry]:
        with database_errors(), self.engine.connect() as connection:
            return read_entries(connection, status=status)

    def list_history(self, domain: str | None = None) -> list[HistoryEvent]:
        with database_errors(), self.engine.connect() as connection:
            return read_history(connection, domain)

    def list_outcomes(self, domain: str | None = None) -> list[Outcome]:
        with database_errors(), self.engine.connect() as connection:
            return read_outcomes(connection, domain)
