"""Weight sets and threshold sets: the versions of the scoring's weights and calibrated
thresholds, each set appended and activated (`weights tune --apply`, `backtest calibrate
--apply`, a rollback), the one activated last in force. One home for reading and writing both
(ADR 0025).

Thresholds' precedence: an active threshold set overrides the settings it names (the score and
confidence threshold bases and the annual sell-through); every other constant comes from the
settings. A set with no values (a rollback to the defaults) overrides nothing. Both are read at
the start of every score stage and appraisal, one indexed query each, so a newly applied set is
used from the next job without a restart."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, Table, insert, select

from dominus.db.errors import database_errors
from dominus.errors import ConfigurationError, NotFoundError
from dominus.schema.tables import MAX_ID, threshold_sets, weight_sets
from dominus.scoring.config import ScoringConfig


class VersionNotFoundError(NotFoundError):
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


def weight_sets_of(engine: Engine) -> VersionedSets:
    return VersionedSets(engine, weight_sets, "weights")


def threshold_sets_of(engine: Engine) -> VersionedSets:
    return VersionedSets(engine, threshold_sets, "thresholds")


THRESHOLD_FIELDS = ("score_threshold_base", "confidence_threshold_base", "annual_sell_through")


def active_thresholds(engine: Engine) -> tuple[int | None, dict[str, Any]]:
    """(version, values) of the set activated last; (None, {}) when none was."""
    active = threshold_sets_of(engine).active()
    return (None, {}) if active is None else (active.id, active.values)


def with_thresholds(config: ScoringConfig, thresholds: dict[str, Any]) -> ScoringConfig:
    overrides: dict[str, Any] = {
        name: float(thresholds[name]) for name in THRESHOLD_FIELDS if name in thresholds
    }
    if not overrides:
        return config
    try:
        return dataclasses.replace(config, **overrides)
    except ValueError as error:
        raise ConfigurationError(f"the active threshold set is invalid: {error}") from None


def with_active_thresholds(engine: Engine, config: ScoringConfig) -> ScoringConfig:
    return with_thresholds(config, active_thresholds(engine)[1])
