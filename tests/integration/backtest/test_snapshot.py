"""The point-in-time snapshot on SQLite and PostgreSQL: the last score before the sale's day,
never one computed after; idempotent per (outcome, scoring row); the baseline; what is skipped."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import Engine, func, select

from dominus.backtest.model import OutcomeInputError
from dominus.config import Settings
from dominus.schema.tables import backtest_signals
from tests.support.backtest_records import add_score, at, sale, service

pytestmark = pytest.mark.backends("sqlite", "postgresql")


SALE_DAY = date(2026, 5, 10)


def test_the_last_score_before_the_sale_is_used_never_a_later_one(
    settings: Settings, engine: Engine, backend: str
) -> None:
    add_score(engine, "cloudnest.com", at("2026-05-01T09:00:00"), 100.0)
    before = add_score(engine, "cloudnest.com", at("2026-05-09T23:59:00"), 200.0)
    add_score(engine, "cloudnest.com", at("2026-05-10T00:00:00"), 300.0)  # the sale's own day
    add_score(engine, "cloudnest.com", at("2026-06-01T09:00:00"), 400.0)
    add_score(engine, "othername.com", at("2026-05-01T09:00:00"), 999.0)
    backtest = service(settings, engine)
    backtest.record([sale("CloudNest.com", 250.0, SALE_DAY)])
    result = backtest.store.build_snapshot(backtest.config(), backtest.clock())
    assert (result.signals_built, result.new_signals) == (1, 1)
    [only] = backtest.store.samples()
    assert (only.domain, only.predicted, only.realised) == ("cloudnest.com", 200.0, 250.0)
    with engine.connect() as connection:
        row = connection.execute(select(backtest_signals)).one()
    assert row.scoring_id == before
    assert (row.absolute_error, row.signed_error) == (50.0, -50.0)
    assert row.confidence_bucket == "mid"
    assert (row.holding_cost, row.carrying_cost) == (40.0, 30.0)


def test_snapshots_are_idempotent(settings: Settings, engine: Engine, backend: str) -> None:
    add_score(engine, "cloudnest.com", at("2026-05-01T09:00:00"), 100.0)
    add_score(engine, "bluepath.io", at("2026-05-01T09:00:00"), 80.0)
    backtest = service(settings, engine)
    backtest.record([sale("cloudnest.com", 250.0, SALE_DAY), sale("bluepath.io", 90.0, SALE_DAY)])
    first = backtest.build()
    second = backtest.build()
    assert (first["signals_built"], first["new_signals"]) == (2, 2)
    assert (second["signals_built"], second["new_signals"]) == (2, 0)
    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(backtest_signals)).scalar() == 2
    assert len(backtest.store.samples()) == 2


def test_what_is_skipped(settings: Settings, engine: Engine, backend: str) -> None:
    add_score(engine, "cloudnest.com", at("2026-05-01T09:00:00"), 100.0)
    add_score(engine, "euroname.com", at("2026-05-01T09:00:00"), 100.0)
    add_score(engine, "toolate.com", at("2026-05-20T09:00:00"), 100.0)
    backtest = service(settings, engine)
    backtest.record(
        [
            sale("cloudnest.com", None, SALE_DAY),
            sale("euroname.com", 500.0, SALE_DAY, currency="EUR"),
            sale("toolate.com", 500.0, SALE_DAY),
        ]
    )
    result = backtest.build()
    assert result["signals_built"] == 0
    assert result["skipped"] == {"no_price": 1, "currency": 1, "no_score_before_sale": 1}


def test_the_baseline_is_the_recency_weighted_median_of_the_listed_sales(
    settings: Settings, engine: Engine, backend: str
) -> None:
    # weights 0.2 + 0.7 + 1.0 = 1.9; half is 0.95, first reached at 3000 (0.2 + 0.7 + 1.0 ≥ 0.95
    # only once 3000 is added: 1000 → 0.2, 2000 → 0.9, 3000 → 1.9)
    sales = [(3000.0, 1.0), (1000.0, 0.2), (2000.0, 0.7)]
    add_score(engine, "cloudnest.com", at("2026-05-01T09:00:00"), 100.0, sales=sales)
    backtest = service(settings, engine)
    backtest.record([sale("cloudnest.com", 250.0, SALE_DAY)])
    backtest.build()
    [only] = backtest.store.samples()
    assert (only.baseline, only.baseline_sales) == (3000.0, 3)


@pytest.mark.parametrize("day", [date(2026, 12, 1)])
def test_a_future_sale_is_refused(
    settings: Settings, engine: Engine, backend: str, day: date
) -> None:
    with pytest.raises(OutcomeInputError, match="after today"):
        service(settings, engine).record([sale("cloudnest.com", 1.0, day)])
    assert service(settings, engine).store.count_outcomes() == 0
