"""The portfolio's typed reads on both backends: dates, money, JSON and NULLs come back typed."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from sqlalchemy import Engine, insert

from dominus.portfolio.store import PortfolioReader
from dominus.schema.tables import outcomes, portfolio_entries, portfolio_verdict_history

pytestmark = pytest.mark.backends("sqlite", "postgresql")


NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def _entry(domain: str, renewal: date, status: str = "active") -> dict[str, object]:
    return {
        "domain": domain,
        "tld": domain.rsplit(".", 1)[1],
        "renewal_date": renewal,
        "currency": "USD",
        "status": status,
        "acquisition_cost": None,
        "created_at": NOW,
        "updated_at": NOW,
    }


def test_entries_history_and_outcomes_read_back_typed(engine: Engine, backend: str) -> None:
    with engine.begin() as connection:
        connection.execute(
            insert(portfolio_entries),
            [
                _entry("late.example", date(2030, 6, 1)),
                _entry("early.example", date(2030, 2, 1)) | {"acquisition_cost": 12.5},
                _entry("gone.example", date(2030, 1, 5), status="sold"),
            ],
        )
    reader = PortfolioReader(engine)
    active = reader.list_entries()
    assert [entry.domain for entry in active] == ["early.example", "late.example"]
    early = reader.get_entry("early.example")
    assert early is not None
    assert early.renewal_date == date(2030, 2, 1)
    assert early.acquisition_cost == 12.5
    assert early.renewal_cost is None and early.verdict is None
    assert early.renewals_paid == 0 and early.status == "active"
    assert early.created_at == NOW
    assert len(reader.list_entries(status=None)) == 3
    assert reader.get_entry("missing.example") is None

    with engine.begin() as connection:
        connection.execute(
            insert(portfolio_verdict_history).values(
                entry_id=early.id,
                domain=early.domain,
                kind="verdict",
                new_verdict="drop",
                method="expected",
                reason="renewal $50 > expected sale value $12 this year",
                at=NOW,
            )
        )
        connection.execute(
            insert(outcomes).values(
                domain="gone.example",
                type="sold",
                sale_price=900.0,
                currency="USD",
                date=date(2030, 1, 3),
                fees=135.0,
                created_at=NOW,
            )
        )
    (event,) = reader.list_history("early.example")
    assert (event.old_verdict, event.new_verdict, event.kind) == (None, "drop", "verdict")
    (outcome,) = reader.list_outcomes()
    assert (outcome.domain, outcome.sale_price, outcome.date) == (
        "gone.example",
        900.0,
        date(2030, 1, 3),
    )
