"""WEIGHT_TUNE's work: snapshot → suggest → safety checks → apply or not → record.

Applied only when every safety check passes, the suggestion changes a weight, and it is not a
dry run; then a new weight set (the suggested shares, source "tuned") is written and activated in
the same transaction as the tune's record, so a scoring process reads it at its next job. Every
tune is recorded, applied or not, with its inputs, each check and the decision (ADR 0025)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dominus.backtest.reweigh import mean_absolute_error
from dominus.backtest.safety import Check, Limits, safety_checks
from dominus.backtest.store import BacktestStore
from dominus.backtest.suggest import Suggestion, suggest
from dominus.db.errors import database_errors
from dominus.scoring.config import ScoringConfig
from dominus.scoring.weighting import shares_of
from dominus.scoring.weights import Weights


@dataclass(frozen=True)
class TuneResult:
    sample_size: int
    applied: bool
    dry_run: bool
    safety_passed: bool
    checks: list[Check]
    suggestion: Suggestion
    decision: str
    tune_id: int
    weight_set_id: int | None
    error_current: float | None
    error_suggested: float | None

    @property
    def failures(self) -> list[str]:
        return [f"{check.name}: {check.detail}" for check in self.checks if not check.passed]

    def to_dict(self) -> dict[str, Any]:
        """The job's result: the tune's figures, then what explains them."""
        return {
            "sample_size": self.sample_size,
            "applied": self.applied,
            "dry_run": self.dry_run,
            "safety_passed": self.safety_passed,
            "failures": self.failures,
            "weights_before": self.suggestion.before.to_dict(),
            "weights_after": self.suggestion.after.to_dict(),
            "decision": self.decision,
            "tune_id": self.tune_id,
            "weight_set_id": self.weight_set_id,
            "checks": [check.to_dict() for check in self.checks],
            "mae_current": self.error_current,
            "mae_suggested": self.error_suggested,
            "signals": [lift.to_dict() for lift in self.suggestion.lifts],
        }


def current_weights(store: BacktestStore) -> tuple[Weights, int | None]:
    active = store.weights.active()
    if active is None:
        return Weights(), None
    return Weights.from_dict(active.values), active.id


def decide(checks: list[Check], suggestion: Suggestion, dry_run: bool) -> tuple[bool, str]:
    failed = [check.name for check in checks if not check.passed]
    if failed:
        return False, f"not applied: safety checks failed ({', '.join(failed)})"
    if not suggestion.changed:
        return False, "not applied: the suggestion changes no weight"
    if dry_run:
        return False, "not applied: dry run"
    return True, "applied"


def tune(
    store: BacktestStore,
    config: ScoringConfig,
    limits: Limits,
    *,
    dry_run: bool,
    now: datetime,
    origin: str,
    job_id: int | None = None,
) -> TuneResult:
    store.build_snapshot(config, now)
    samples = store.samples()
    current, current_id = current_weights(store)
    suggestion = suggest(samples, current)
    error_current = mean_absolute_error(samples, suggestion.before, config)
    error_suggested = mean_absolute_error(samples, suggestion.after, config)
    checks = safety_checks(
        sample_size=len(samples),
        current=suggestion.before,
        suggested=suggestion.after,
        defaults=shares_of(Weights()),
        error_current=error_current,
        error_suggested=error_suggested,
        limits=limits,
    )
    apply, decision = decide(checks, suggestion, dry_run)
    inputs = {
        "active_weight_set": current_id,
        "limits": {
            "AUTO_TUNE_MIN_SAMPLE": limits.min_sample,
            "AUTO_TUNE_MAX_DELTA": limits.max_delta,
            "AUTO_TUNE_MAX_DRIFT": limits.max_drift,
        },
        "mae_current": error_current,
        "mae_suggested": error_suggested,
        "suggestion": suggestion.to_dict(),
    }
    with database_errors(), store.engine.begin() as connection:
        set_id = None
        if apply:
            set_id = store.weights.add(
                f"tuned {now.date().isoformat()}",
                suggestion.after.to_dict(),
                "tuned",
                now,
                notes=f"weight tune by {origin}; MAE {error_current:,.2f} → {error_suggested:,.2f}"
                if error_current is not None and error_suggested is not None
                else f"weight tune by {origin}",
                connection=connection,
            )
            decision = f"applied as weight set {set_id}"
        tune_id = store.record_tune(
            {
                "created_at": now,
                "origin": origin,
                "job_id": job_id,
                "sample_size": len(samples),
                "dry_run": dry_run,
                "safety_passed": all(check.passed for check in checks),
                "applied": apply,
                "decision": decision,
                "failures": [f"{c.name}: {c.detail}" for c in checks if not c.passed],
                "checks": [check.to_dict() for check in checks],
                "inputs": inputs,
                "weights_before": suggestion.before.to_dict(),
                "weights_after": suggestion.after.to_dict(),
                "weight_set_id": set_id,
            },
            connection=connection,
        )
    return TuneResult(
        sample_size=len(samples),
        applied=apply,
        dry_run=dry_run,
        safety_passed=all(check.passed for check in checks),
        checks=checks,
        suggestion=suggestion,
        decision=decision,
        tune_id=tune_id,
        weight_set_id=set_id,
        error_current=error_current,
        error_suggested=error_suggested,
    )
