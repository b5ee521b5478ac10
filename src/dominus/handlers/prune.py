"""PRUNE: delete the rows past their retention, in bounded steps (ADR 0020).

The payload may override each retention (`job_retention_days`, `dlq_retention_days`,
`pipeline_run_retention_days`; 0 keeps that kind of row) and the batch size; `dry_run` counts
what would go and deletes nothing. Progress after every step: the rule at work and the counts
so far. Abortable between steps; what was deleted before stays deleted."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.payload_options import dry_run_option
from dominus.jobs.queues import MAINTENANCE_QUEUE
from dominus.jobs.registry import HandlerRegistry
from dominus.maintenance.prune import prune, retention_from
from dominus.maintenance.settings import MAX_PRUNE_BATCH_SIZE, MAX_RETENTION_DAYS

PRUNE = "PRUNE"


class PrunePayload(BaseModel):
    """Overrides of JOB_RETENTION_DAYS, DLQ_RETENTION_DAYS, PIPELINE_RUN_RETENTION_DAYS and
    PRUNE_BATCH_SIZE; `dry_run` only counts."""

    model_config = ConfigDict(extra="forbid")

    dry_run: bool = dry_run_option(False, "Count what would be deleted; delete nothing.")
    job_retention_days: int | None = Field(default=None, ge=0, le=MAX_RETENTION_DAYS)
    dlq_retention_days: int | None = Field(default=None, ge=0, le=MAX_RETENTION_DAYS)
    pipeline_run_retention_days: int | None = Field(default=None, ge=0, le=MAX_RETENTION_DAYS)
    batch_size: int | None = Field(default=None, ge=1, le=MAX_PRUNE_BATCH_SIZE)


def register_prune(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    def handle(payload: PrunePayload, context: JobContext) -> dict[str, Any]:
        settings = dependencies.settings
        retention = retention_from(
            settings,
            job_days=payload.job_retention_days,
            dead_letter_days=payload.dlq_retention_days,
            pipeline_run_days=payload.pipeline_run_retention_days,
        )

        def progress(rule: str, counts: dict[str, int]) -> None:
            context.progress(rule=rule, counts=counts, dry_run=payload.dry_run)

        report = prune(
            dependencies.engine,
            retention,
            dependencies.clock(),
            batch_size=payload.batch_size or settings.PRUNE_BATCH_SIZE,
            dry_run=payload.dry_run,
            abort=context.abort,
            on_progress=progress,
        )
        return report.document()

    registry.register(PRUNE, handle, PrunePayload, queue=MAINTENANCE_QUEUE)
