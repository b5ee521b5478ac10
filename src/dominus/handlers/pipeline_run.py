"""PIPELINE_RUN: runs (or resumes) one pipeline run; the run row holds its input."""

from __future__ import annotations

from typing import Any

from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.abort import AbortReason
from dominus.jobs.context import JobContext
from dominus.jobs.registry import HandlerRegistry
from dominus.pipeline.model import PIPELINE_RUN, STAGES, PipelineRunPayload, RunStatus, Stage
from dominus.pipeline.runner import PipelineRunner
from dominus.pipeline.setup import open_providers, pipeline_options
from dominus.pipeline.store import PipelineStore, RunRecord

# A big run takes a while; a worker that dies mid-run is reclaimed and the retry resumes from
# the last checkpoint, so a few attempts are cheap.
PIPELINE_MAX_ATTEMPTS = 3


def register_pipeline_run(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    def handle(payload: PipelineRunPayload, context: JobContext) -> dict[str, Any]:
        return run_pipeline_job(payload.run_id, context, dependencies)

    registry.register(PIPELINE_RUN, handle, PipelineRunPayload, max_attempts=PIPELINE_MAX_ATTEMPTS)


def run_pipeline_job(
    run_id: int, context: JobContext, dependencies: HandlerDependencies
) -> dict[str, Any]:
    store = PipelineStore(dependencies.engine)
    settings = dependencies.settings

    def progress(stage: Stage, number: int, done: int, total: int) -> None:
        context.progress(
            run_id=run_id,
            stage=stage.value,
            stage_number=number,
            stages=len(STAGES),
            done=done,
            total=total,
        )

    with open_providers(settings, store.get_run(run_id).providers) as providers:
        runner = PipelineRunner(
            store,
            providers,
            pipeline_options(settings),
            clock=dependencies.clock,
            stop=context.abort,
            on_progress=progress,
        )
        try:
            run = runner.run(run_id)
        except BaseException as error:
            record_interruption(store, run_id, context.abort.reason, error, dependencies)
            raise
    return run_result(run)


def record_interruption(
    store: PipelineStore,
    run_id: int,
    reason: AbortReason | None,
    error: BaseException,
    dependencies: HandlerDependencies,
) -> None:
    """What the run row says when its job stops early. A worker shutdown or a lost claim leaves
    the run to the job's next attempt (which resumes from the checkpoints)."""
    now = dependencies.clock()
    if reason is AbortReason.LOST:
        return  # another attempt owns the job (and the run) now
    if reason is AbortReason.SHUTDOWN:
        if dependencies.settings.WORKER_SHUTDOWN_REQUEUE:
            store.return_to_pending(run_id)
        else:
            store.finish_run(run_id, RunStatus.CANCELLED, now, error="the worker shut down")
    elif reason is AbortReason.CANCELLED:
        store.finish_run(run_id, RunStatus.CANCELLED, now, error="cancelled")
    elif reason is AbortReason.TIMEOUT:
        store.finish_run(run_id, RunStatus.FAILED, now, error="the job timed out")
    else:
        store.finish_run(run_id, RunStatus.FAILED, now, error=f"{type(error).__name__}: {error}")


def run_result(run: RunRecord) -> dict[str, Any]:
    summary = run.summary or {}
    return {
        "run_id": run.id,
        "status": run.status.value,
        "degraded": run.degraded,
        "degraded_reasons": run.degraded_reasons,
        "candidates": summary.get("candidates"),
        "recommended": summary.get("recommended"),
        "sample_data": summary.get("sample_data"),
    }
