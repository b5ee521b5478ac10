"""The backtest as the CLI, the API and the handlers use it: record outcomes (and enqueue the
build), build the snapshot, report, plot, tune, calibrate, and the weight and threshold versions.

The scoring config is the settings' (SCORING_*) with the active calibrated thresholds over them,
read per call, as scoring reads it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from dominus.backtest.build_queue import build_enqueuer
from dominus.backtest.calibrate import calibrate
from dominus.backtest.documents import WeightsOut
from dominus.backtest.model import CalibrationError, RecordedOutcomes
from dominus.backtest.outcomes import OutcomeIn, checked, read_outcomes_csv
from dominus.backtest.plot import render_png
from dominus.backtest.report import ReportOptions, build_report
from dominus.backtest.safety import Limits
from dominus.backtest.settings import BacktestSettings
from dominus.backtest.store import BacktestStore
from dominus.backtest.suggest import suggest
from dominus.backtest.tuning import TuneResult, current_weights, tune
from dominus.jobs.client import JobQueue
from dominus.pipeline.scoring_sets import THRESHOLD_FIELDS, with_active_thresholds
from dominus.scoring.config import ScoringConfig
from dominus.scoring.settings import scoring_config

# Sales a build needs before it suggests weights (BACKTEST_BUILD's payload, `backtest build`).
DEFAULT_MIN_SAMPLE_SIZE = 5
MAX_MIN_SAMPLE_SIZE = 1_000_000


@dataclass
class BacktestService:
    settings: BacktestSettings
    engine: Engine
    clock: Callable[[], dt.datetime]
    queue: JobQueue | None = None  # None: outcomes are recorded without enqueueing a build

    @property
    def store(self) -> BacktestStore:
        return BacktestStore(self.engine)

    def config(self) -> ScoringConfig:
        return with_active_thresholds(self.engine, scoring_config(self.settings))

    def limits(self) -> Limits:
        return Limits(
            min_sample=self.settings.AUTO_TUNE_MIN_SAMPLE,
            max_delta=self.settings.AUTO_TUNE_MAX_DELTA,
            max_drift=self.settings.AUTO_TUNE_MAX_DRIFT,
        )

    # --- outcomes ------------------------------------------------------------------------------
    def check(self, entries: Sequence[OutcomeIn]) -> list[OutcomeIn]:
        today = self.clock().date()
        currency = self.config().currency
        return [checked(entry, today, currency) for entry in entries]

    def record(self, entries: Sequence[OutcomeIn]) -> RecordedOutcomes:
        """Record the outcomes (checked first: nothing is written unless all are valid); a sale
        with a price enqueues BACKTEST_BUILD in the same transaction (deduplicated)."""
        valid = self.check(entries)
        enqueue = None if self.queue is None else build_enqueuer(self.queue)
        return self.store.record_outcomes(valid, self.clock(), enqueue)

    def read_csv(self, path: Path) -> list[OutcomeIn]:
        return read_outcomes_csv(path, self.clock().date(), self.config().currency)

    # --- snapshot, report, suggestion ----------------------------------------------------------
    def build(
        self,
        min_sample_size: int = DEFAULT_MIN_SAMPLE_SIZE,
        stop: Callable[[], None] = lambda: None,
    ) -> dict[str, Any]:
        """BACKTEST_BUILD's work: {signals_built, new_signals, report, suggestion?,
        skipped}."""
        config = self.config()
        snapshot = self.store.build_snapshot(config, self.clock())
        stop()
        samples = self.store.samples()
        current, _ = current_weights(self.store)
        result = snapshot.to_dict()
        result["report"] = build_report(samples, current, config)
        stop()
        if len(samples) >= min_sample_size:
            result["suggestion"] = suggest(samples, current).to_dict()
        return result

    def report(self, options: ReportOptions | None = None) -> dict[str, Any]:
        """The report of the snapshot as it stands (nothing is built or written)."""
        current, _ = current_weights(self.store)
        return build_report(self.store.samples(), current, self.config(), options)

    def plot(self) -> bytes:
        samples = self.store.samples()
        return render_png(samples, self.config().currency)

    # --- tuning --------------------------------------------------------------------------------
    def tune(self, *, dry_run: bool, origin: str, job_id: int | None = None) -> TuneResult:
        return tune(
            self.store,
            self.config(),
            self.limits(),
            dry_run=dry_run,
            now=self.clock(),
            origin=origin,
            job_id=job_id,
        )

    def weights_in_force(self) -> WeightsOut:
        """The weights scoring uses now, the defaults, and the active weight set."""
        store = self.store
        current, _ = current_weights(store)
        return WeightsOut.of(store.weights.active(), current)

    # --- calibration ---------------------------------------------------------------------------
    def calibrate(self, target_precision: float) -> dict[str, Any]:
        self.store.build_snapshot(self.config(), self.clock())
        return calibrate(self.store.samples(), self.config(), target_precision)

    def apply_calibration(self, result: dict[str, Any]) -> int:
        best = result.get("best")
        if result["sample_size"] == 0:
            raise CalibrationError("no sold outcome has a score before its sale: nothing to apply")
        if best is None:
            raise CalibrationError(
                f"no setting reaches precision {result['target_precision']:g}: nothing applied"
            )
        values = {name: best[name] for name in THRESHOLD_FIELDS}
        return self.store.thresholds.add(
            f"calibrated {self.clock().date().isoformat()}",
            values,
            "calibrated",
            self.clock(),
            notes=f"precision {best['precision']:.3f}, recall {best['recall']:.3f}, "
            f"{best['recommended']} of {result['sample_size']} recommended",
        )
