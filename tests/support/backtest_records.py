"""Rows for the backtest's integration tests: scores at chosen times, a service on a clock."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Engine, insert

from dominus.backtest.outcomes import OutcomeIn
from dominus.backtest.service import BacktestService
from dominus.config import Settings
from dominus.jobs.client import JobQueue
from dominus.schema.tables import pipeline_runs, scoring_runs

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def add_score(
    engine: Engine,
    domain: str,
    scored_at: datetime,
    expected_value: float,
    *,
    sales: list[tuple[float, float]] = (),  # type: ignore[assignment]
) -> int:
    """A completed run holding one score of `domain` computed at `scored_at`."""
    details: dict[str, Any] = {
        "anchors": {"market": None, "commercial": None, "expiry": 1000.0},
        "coverage_ratio": 0.5,
        "gates": {"evidence": True},
        "money": {"holding_cost": 40.0, "carrying_cost": 30.0},
        "market": {"sales": [{"adjusted_price": p, "recency": r} for p, r in sales]},
    }
    with engine.begin() as connection:
        run_id = connection.execute(
            insert(pipeline_runs)
            .values(
                status="completed",
                input={"brandable": [domain]},
                providers="sample",
                created_at=scored_at,
                stages={},
                degraded=False,
                degraded_reasons=[],
            )
            .returning(pipeline_runs.c.id)
        ).scalar_one()
        return int(
            connection.execute(
                insert(scoring_runs)
                .values(
                    run_id=run_id,
                    domain=domain,
                    intrinsic=0.5,
                    expiry=0.4,
                    weighted_score=0.45,
                    confidence=0.35,
                    expected_value=expected_value,
                    suggested_buy_max=10.0,
                    suggested_list_price=expected_value * 2.5,
                    recommended=False,
                    trademark_verdict="clear",
                    details=details,
                    scored_at=scored_at,
                )
                .returning(scoring_runs.c.id)
            ).scalar_one()
        )


def service(
    settings: Settings, engine: Engine, queue: JobQueue | None = None, now: datetime = NOW
) -> BacktestService:
    return BacktestService(settings, engine, lambda: now, queue)


def sale(domain: str, price: float | None, day: date, **extra: Any) -> OutcomeIn:
    return OutcomeIn(domain=domain, type="sold", price=price, date=day, **extra)
