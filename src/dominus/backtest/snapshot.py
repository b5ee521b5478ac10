"""The point-in-time snapshot: each sold outcome joined to the last score computed before it.

"Before" is strictly before the sale's day began (00:00 UTC): a sale's date has no time, so a
score from the same day might have followed it. A sale is skipped (and counted) when it has no
price, is in another currency than the scoring one (prices are never converted), or has no score
before it. Rows are inserted once per (outcome, scoring row): building again adds nothing, and a
row stays when its run is pruned (the figures are copied, ADR 0025)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from typing import Any

from sqlalchemy import Connection, select

from dominus.backtest.samples import Sample, confidence_bucket
from dominus.db.dialects import dialect_insert
from dominus.portfolio.model import Outcome
from dominus.portfolio.store import outcome_of
from dominus.schema.tables import backtest_signals, outcomes, scoring_runs
from dominus.scoring.config import ScoringConfig
from dominus.scoring.market import weighted_quantile


@dataclass
class SnapshotResult:
    signals_built: int = 0  # sold outcomes joined to a score
    new_signals: int = 0  # rows inserted by this build
    skipped: dict[str, int] = field(
        default_factory=lambda: {"no_price": 0, "currency": 0, "no_score_before_sale": 0}
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "signals_built": self.signals_built,
            "new_signals": self.new_signals,
            "skipped": dict(self.skipped),
        }


def sale_start(outcome: Outcome) -> datetime:
    return datetime.combine(outcome.date, time.min, tzinfo=UTC)


def last_score_before(connection: Connection, outcome: Outcome) -> Any | None:
    return connection.execute(
        select(scoring_runs)
        .where(
            scoring_runs.c.domain == outcome.domain, scoring_runs.c.scored_at < sale_start(outcome)
        )
        .order_by(scoring_runs.c.scored_at.desc(), scoring_runs.c.id.desc())
        .limit(1)
    ).first()


def recency_weighted_median(details: Mapping[str, Any]) -> tuple[float | None, int]:
    """The baseline: the median of the relevant sales' TLD-adjusted prices, each weighed by its
    recency when scored; (None, 0) when the score listed none."""
    sales = [
        sale
        for sale in (details.get("market") or {}).get("sales") or []
        if isinstance(sale, Mapping) and sale.get("adjusted_price") is not None
    ]
    if not sales:
        return None, 0
    pairs = [(float(sale["adjusted_price"]), float(sale.get("recency") or 0.0)) for sale in sales]
    return round(weighted_quantile(pairs, 0.5), 2), len(sales)


def _value_ranges(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, Mapping):
        return None
    return {key: value.get(key) for key in ("wholesale", "retail")}


def signal_row(outcome: Outcome, score: Any, now: datetime) -> dict[str, Any]:
    details: Mapping[str, Any] = score.details or {}
    money: Mapping[str, Any] = details.get("money") or {}
    realised = float(outcome.sale_price or 0.0)
    predicted = float(score.expected_value)
    baseline, baseline_sales = recency_weighted_median(details)
    return {
        "outcome_id": outcome.id,
        "scoring_id": score.id,
        "run_id": score.run_id,
        "domain": outcome.domain,
        "sale_date": outcome.date,
        "scored_at": score.scored_at,
        "realised_price": realised,
        "currency": outcome.currency,
        "predicted_value": predicted,
        "buy_max": float(score.suggested_buy_max),
        "confidence": float(score.confidence),
        "confidence_bucket": confidence_bucket(float(score.confidence)),
        "weighted_score": float(score.weighted_score),
        "intrinsic": score.intrinsic,
        "commercial": score.commercial,
        "market": score.market,
        "expiry": score.expiry,
        "recommended": bool(score.recommended),
        "absolute_error": abs(predicted - realised),
        "signed_error": predicted - realised,
        "holding_cost": money.get("holding_cost"),
        "carrying_cost": money.get("carrying_cost"),
        "baseline_value": baseline,
        "baseline_sales": baseline_sales,
        "inputs": {
            "anchors": dict(details.get("anchors") or {}),
            "coverage_ratio": details.get("coverage_ratio", 0.0),
            "gates": dict(details.get("gates") or {}),
            "trademark_clear": score.trademark_verdict == "clear",
            "tier": details.get("tier"),
            "score_threshold": details.get("score_threshold"),
            "confidence_threshold": details.get("confidence_threshold"),
            "effective_weights": details.get("effective_weights"),
            # The value model's ranges and the sale's venue: the report measures the range of
            # the venue's class against the price (value_figures.py).
            "value": _value_ranges(details.get("value")),
            "venue": outcome.venue,
        },
        "created_at": now,
    }


def build_snapshot(connection: Connection, config: ScoringConfig, now: datetime) -> SnapshotResult:
    """Join every sold outcome to its last score before the sale; insert the new pairs."""
    result = SnapshotResult()
    sold = connection.execute(
        select(outcomes).where(outcomes.c.type == "sold").order_by(outcomes.c.id)
    )
    rows = []
    for outcome in [outcome_of(row) for row in sold]:
        if outcome.sale_price is None or outcome.sale_price <= 0:
            result.skipped["no_price"] += 1
            continue
        if (outcome.currency or config.currency).upper() != config.currency.upper():
            result.skipped["currency"] += 1
            continue
        score = last_score_before(connection, outcome)
        if score is None:
            result.skipped["no_score_before_sale"] += 1
            continue
        rows.append(signal_row(outcome, score, now))
    result.signals_built = len(rows)
    for row in rows:
        inserted = connection.execute(
            dialect_insert(connection, backtest_signals)
            .values(**row)
            .on_conflict_do_nothing(index_elements=["outcome_id", "scoring_id"])
            .returning(backtest_signals.c.id)
        )
        result.new_signals += len(inserted.all())
    return result


def sample_of(row: Any) -> Sample:
    return Sample(
        domain=row.domain,
        sale_date=row.sale_date,
        realised=row.realised_price,
        predicted=row.predicted_value,
        buy_max=row.buy_max,
        confidence=row.confidence,
        weighted_score=row.weighted_score,
        signals={
            "intrinsic": row.intrinsic,
            "commercial": row.commercial,
            "market": row.market,
            "expiry": row.expiry,
        },
        recommended=row.recommended,
        holding_cost=row.holding_cost,
        carrying_cost=row.carrying_cost,
        baseline=row.baseline_value,
        baseline_sales=row.baseline_sales,
        inputs=dict(row.inputs or {}),
        outcome_id=row.outcome_id,
    )


def read_samples(connection: Connection) -> list[Sample]:
    """One sample per outcome: its snapshot row with the newest score (a row whose scoring row
    was pruned stays; a newer one, if ever joined, wins), in sale-date order."""
    query = select(backtest_signals).order_by(
        backtest_signals.c.outcome_id,
        backtest_signals.c.scored_at.desc(),
        backtest_signals.c.id.desc(),
    )
    latest: dict[int, Sample] = {}
    for row in connection.execute(query):
        latest.setdefault(row.outcome_id, sample_of(row))
    return sorted(latest.values(), key=lambda s: (s.sale_date, s.domain, s.outcome_id))
