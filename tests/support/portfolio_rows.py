"""Portfolio entries written straight into their table (the portfolio's own writes are another
feature's): what the renewal check reads."""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, delete, insert, update

from dominus.notify import LogNotifier
from dominus.renewals.check import RenewalCheck
from dominus.renewals.model import Thresholds
from dominus.runtime import Runtime
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


def raise_renewal_alerts(runtime: Runtime) -> None:
    """Three names (renewing in 3 days, in 20 days, and a day past due) and the renewal check
    that raises their alerts (critical at 7 days, imminent at 30)."""
    today = runtime.clock().date()
    add_entry(runtime.engine, "soon.com", today + timedelta(days=3), runtime.clock())
    add_entry(runtime.engine, "later.com", today + timedelta(days=20), runtime.clock())
    add_entry(runtime.engine, "late.com", today - timedelta(days=1), runtime.clock())
    RenewalCheck(runtime.engine, LogNotifier(), Thresholds(7, 30), runtime.clock).run(
        threading.Event()
    )
