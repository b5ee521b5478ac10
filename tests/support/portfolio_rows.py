"""Portfolio entries written straight into their table (the portfolio's own writes are another
feature's): what the renewal check reads."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import Engine, delete, insert, update

from dominus.schema.tables import portfolio_entries


def add_entry(engine: Engine, domain: str, renewal_date: date, now: datetime, **values: Any) -> int:
    row: dict[str, Any] = {
        "domain": domain,
        "tld": domain.rsplit(".", 1)[1],
        "renewal_date": renewal_date,
        "renewal_cost": 12.5,
        "currency": "USD",
        "registrar": "Example Registrar",
        "status": "active",
        "created_at": now,
        "updated_at": now,
    }
    row.update(values)
    with engine.begin() as connection:
        inserted = connection.execute(
            insert(portfolio_entries).values(row).returning(portfolio_entries.c.id)
        ).scalar_one()
    return int(inserted)


def change_entry(engine: Engine, domain: str, **values: Any) -> None:
    with engine.begin() as connection:
        connection.execute(
            update(portfolio_entries).where(portfolio_entries.c.domain == domain).values(values)
        )


def remove_entry(engine: Engine, domain: str) -> None:
    with engine.begin() as connection:
        connection.execute(delete(portfolio_entries).where(portfolio_entries.c.domain == domain))
