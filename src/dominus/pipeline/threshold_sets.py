"""The active calibrated thresholds (`backtest calibrate --apply`, ADR 0025) over the SCORING_*
settings.

Precedence: an active threshold set overrides the settings it names (the score and confidence
threshold bases and the annual sell-through); every other constant comes from the settings. A set
with no values (a rollback to the defaults) overrides nothing. It is read where the weights are
(at the start of every score stage and appraisal), one indexed query, so a newly applied set is
used from the next job without a restart."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import Engine, select

from dominus.db.errors import database_errors
from dominus.db.schema import threshold_sets
from dominus.errors import ConfigurationError
from dominus.scoring.config import ScoringConfig

THRESHOLD_FIELDS = ("score_threshold_base", "confidence_threshold_base", "annual_sell_through")


def active_thresholds(engine: Engine) -> tuple[int | None, dict[str, Any]]:
    """(version, values) of the set activated last; (None, {}) when none was."""
    query = (
        select(threshold_sets.c.id, threshold_sets.c.thresholds)
        .where(threshold_sets.c.activated_at.is_not(None))
        .order_by(threshold_sets.c.activated_at.desc(), threshold_sets.c.id.desc())
        .limit(1)
    )
    with database_errors(), engine.connect() as connection:
        row = connection.execute(query).first()
    return (None, {}) if row is None else (row.id, dict(row.thresholds or {}))


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
