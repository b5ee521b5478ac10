"""WEIGHT_TUNE {dry_run?}: snapshot → suggest → safety checks → a new active weight set when
every check passes and it is not a dry run (dry_run, else AUTO_TUNE_DRY_RUN, true by default).
Every tune is recorded. Result: {sample_size, applied, dry_run, safety_passed, failures,
weights_before, weights_after, ...}. Scheduled monthly by the weight-tune schedule
(AUTO_TUNE_ENABLED)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from dominus.backtest.build_queue import WEIGHT_TUNE
from dominus.backtest.service import BacktestService
from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.payload_options import dry_run_option
from dominus.jobs.registry import HandlerRegistry


class WeightTunePayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool | None = dry_run_option(
        None, "true: record what would change, write nothing; default AUTO_TUNE_DRY_RUN."
    )


def register_weight_tune(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    def handle(payload: WeightTunePayload, context: JobContext) -> dict[str, Any]:
        settings = dependencies.settings
        service = BacktestService(settings, dependencies.engine, dependencies.clock)
        dry_run = settings.AUTO_TUNE_DRY_RUN if payload.dry_run is None else payload.dry_run
        context.progress(phase="tune")
        context.abort.raise_if_set()
        result = service.tune(dry_run=dry_run, origin="job", job_id=context.job.id)
        return result.to_dict()

    # One tune at a time would be ideal; the record and the weight set are one transaction, so
    # two racing tunes each leave a consistent row and the later set wins.
    registry.register(WEIGHT_TUNE, handle, WeightTunePayload, max_attempts=1)
