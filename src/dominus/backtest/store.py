"""The backtest's rows: outcomes written here (with their BACKTEST_BUILD), the snapshot, weight
tunes, weight-set history and rollback, and calibrated threshold sets.

Weight and threshold sets are append-only versions: applying or rolling back writes a new row
and activates it, so `history` shows every change in order and nothing is rewritten."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, func, insert, select

from dominus.backtest.model import RecordedOutcomes
from dominus.backtest.outcomes import OutcomeIn
from dominus.backtest.samples import Sample
from dominus.backtest.snapshot import SnapshotResult, build_snapshot, read_samples
from dominus.db.errors import database_errors
from dominus.pipeline.scoring_sets import threshold_sets_of, weight_sets_of
from dominus.portfolio.model import Outcome
from dominus.portfolio.store import outcome_of
from dominus.schema.tables import outcomes, weight_tunes
from dominus.scoring.config import ScoringConfig

# (connection) -> (job id, created): enqueues the build in the outcome's own transaction.
EnqueueBuild = Callable[[Connection], tuple[int, bool]]


class BacktestStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.weights = weight_sets_of(engine)
        self.thresholds = threshold_sets_of(engine)

    # --- outcomes ------------------------------------------------------------------------------
    def record_outcomes(
        self, entries: Sequence[OutcomeIn], now: datetime, enqueue: EnqueueBuild | None
    ) -> RecordedOutcomes:
        """Insert the outcomes in one transaction; when one is a sale with a price and `enqueue`
        is given, the BACKTEST_BUILD is enqueued in that transaction too."""
        with database_errors(), self.engine.begin() as connection:
            ids = [
                int(
                    connection.execute(
                        insert(outcomes)
                        .values(
                            domain=entry.domain,
                            type=entry.type,
                            sale_price=entry.price,
                            currency=entry.currency,
                            date=entry.date,
                            venue=entry.venue,
                            fees=entry.fees,
                            notes=entry.notes,
                            created_at=now,
                        )
                        .returning(outcomes.c.id)
                    ).scalar_one()
                )
                for entry in entries
            ]
            job_id, created = None, False
            if enqueue is not None and any(e.type == "sold" and e.price for e in entries):
                job_id, created = enqueue(connection)
            rows = connection.execute(
                select(outcomes).where(outcomes.c.id.in_(ids)).order_by(outcomes.c.id)
            )
            return RecordedOutcomes([outcome_of(row) for row in rows], job_id, created)

    def list_outcomes(
        self, *, outcome_type: str | None = None, limit: int = 100, offset: int = 0
    ) -> list[Outcome]:
        query = select(outcomes).order_by(outcomes.c.date.desc(), outcomes.c.id.desc())
        if outcome_type is not None:
            query = query.where(outcomes.c.type == outcome_type)
        query = query.limit(limit).offset(offset)
        with database_errors(), self.engine.connect() as connection:
            return [outcome_of(row) for row in connection.execute(query)]

    def count_outcomes(self) -> int:
        with database_errors(), self.engine.connect() as connection:
            return int(connection.execute(select(func.count()).select_from(outcomes)).scalar_one())

    # --- the snapshot --------------------------------------------------------------------------
    def build_snapshot(self, config: ScoringConfig, now: datetime) -> SnapshotResult:
        with database_errors(), self.engine.begin() as connection:
            return build_snapshot(connection, config, now)

    def samples(self) -> list[Sample]:
        with database_errors(), self.engine.connect() as connection:
            return read_samples(connection)

    # --- tunes ---------------------------------------------------------------------------------
    def record_tune(self, values: dict[str, Any], connection: Connection | None = None) -> int:
        statement = insert(weight_tunes).values(**values).returning(weight_tunes.c.id)
        if connection is not None:
            return int(connection.execute(statement).scalar_one())
        with database_errors(), self.engine.begin() as own:
            return int(own.execute(statement).scalar_one())

    def tunes(self, limit: int = 50) -> list[dict[str, Any]]:
        query = select(weight_tunes).order_by(weight_tunes.c.id.desc()).limit(limit)
        with database_errors(), self.engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(query)]
