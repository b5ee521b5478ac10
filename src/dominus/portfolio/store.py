"""Typed reads of the portfolio's rows: entries, their verdict history and outcomes.

Writes live beside the features that make them (the service, the importer, the ledger); these
reads are what other parts (renewal alerts, the backtest) rely on."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, select

from dominus.db.errors import database_errors
from dominus.portfolio.model import EntryStatus, HistoryEvent, Outcome, PortfolioEntry
from dominus.schema.tables import outcomes, portfolio_entries, portfolio_verdict_history


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
