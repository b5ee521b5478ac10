"""The backtest's rows: outcomes written here (with their BACKTEST_BUILD), the snapshot, weight
tunes, weight-set history and rollback, and calibrated threshold sets.

Weight and threshold sets are append-only versions: applying or rolling back writes a new row
and activates it, so `history` shows every change in order and nothing is rewritten."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Table, func, insert, select

from dominus.backtest.outcomes import OutcomeIn
from dominus.backtest.samples import Sample
from dominus.backtest.snapshot import SnapshotResult, build_snapshot, read_samples
from dominus.db.errors import database_errors
from dominus.db.schema import MAX_ID, outcomes, threshold_sets, weight_sets, weight_tunes
from dominus.errors import DominusError
from dominus.portfolio.store import Outcome, outcome_of
from dominus.scoring.config import ScoringConfig

# (connection) -> (job id, created): enqueues the build in the outcome's own transaction.
EnqueueBuild = Callable[[Connection], tuple[int, bool]]


class VersionNotFoundError(DominusError):
    """No weight or threshold set with that version."""


@dataclass(frozen=True)
class VersionedSet:
    """A weight set or a threshold set: `values` are the weights or the thresholds."""

    id: int
    name: str
    values: dict[str, Any]
    source: str
    notes: str | None
    created_at: datetime
    activated_at: datetime | None

    def to_dict(self, active_id: int | None = None) -> dict[str, Any]:
        return {
            "version": self.id,
            "name": self.name,
            "values": self.values,
            "source": self.source,
            "notes": self.notes,
            "createdAt": self.created_at.isoformat(),
            "activatedAt": self.activated_at.isoformat() if self.activated_at else None,
            "active": self.id == active_id,
        }


@dataclass(frozen=True)
class RecordedOutcomes:
    outcomes: list[Outcome]
    build_job_id: int | None
    build_created: bool


class VersionedSets:
    """Reads and appends the versions of `weight_sets` or `threshold_sets`."""

    def __init__(self, engine: Engine, table: Table, values_column: str) -> None:
        self.engine = engine
        self.table = table
        self.values_column = values_column

    def _of(self, row: Any) -> VersionedSet:
        mapping = row._mapping
        return VersionedSet(
            id=mapping["id"],
            name=mapping["name"],
            values=dict(mapping[self.values_column]),
            source=mapping["source"],
            notes=mapping["notes"],
            created_at=mapping["created_at"],
            activated_at=mapping["activated_at"],
        )

    def active(self) -> VersionedSet | None:
        table = self.table
        query = (
            select(table)
            .where(table.c.activated_at.is_not(None))
            .order_by(table.c.activated_at.desc(), table.c.id.desc())
            .limit(1)
        )
        with database_errors(), self.engine.connect() as connection:
            row = connection.execute(query).first()
        return None if row is None else self._of(row)

    def history(self, limit: int = 100) -> list[VersionedSet]:
        query = select(self.table).order_by(self.table.c.id.desc()).limit(limit)
        with database_errors(), self.engine.connect() as connection:
            return [self._of(row) for row in connection.execute(query)]

    def get(self, version: int) -> VersionedSet:
        if not 0 < version <= MAX_ID:
            raise VersionNotFoundError(f"no version {version}")
        with database_errors(), self.engine.connect() as connection:
            row = connection.execute(select(self.table).where(self.table.c.id == version)).first()
        if row is None:
            raise VersionNotFoundError(f"no version {version}")
        return self._of(row)

    def add(
        self,
        name: str,
        values: dict[str, Any],
        source: str,
        now: datetime,
        *,
        notes: str | None = None,
        connection: Connection | None = None,
    ) -> int:
        """A new version, activated now (with `connection`: in the caller's transaction)."""
        statement = (
            insert(self.table)
            .values(
                name=name,
                source=source,
                notes=notes,
                created_at=now,
                activated_at=now,
                **{self.values_column: values},
            )
            .returning(self.table.c.id)
        )
        if connection is not None:
            return int(connection.execute(statement).scalar_one())
        with database_errors(), self.engine.begin() as own:
            return int(own.execute(statement).scalar_one())

    def rollback(self, version: int, now: datetime) -> int:
        """Activate a copy of `version` as a new version; returns its id."""
        target = self.get(version)
        return self.add(
            f"rollback to {version}",
            target.values,
            "rollback",
            now,
            notes=f"copy of version {version} ({target.name})",
        )


class BacktestStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.weights = VersionedSets(engine, weight_sets, "weights")
        self.thresholds = VersionedSets(engine, threshold_sets, "thresholds")

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
