"""PIPELINE_RUN: runs (or resumes) one pipeline run; the run row holds its input.

Only the run's own job runs it (the job created with the run, `pipeline_runs.job_id`): its first
attempt, a retry after a crash or a failure, or an operator's `jobs retry` / `dlq requeue`. Any
other PIPELINE_RUN job (one enqueued by hand before such jobs were refused, or by code) fails
permanently, without a retry: rerunning a finished run would overwrite its results, and an
unknown run will not appear by retrying.

Every write the run makes goes through the job context's fenced transaction (ADR 0024): an
attempt that was reclaimed (its worker went silent) and still runs cannot write checkpoints,
results or the run's status beside the attempt that replaced it; its writes are refused with
ClaimLostError. The run's results, its completed status and the job's completion are one
transaction."""

from __future__ import annotations

import contextlib
from typing import Any

from sqlalchemy import Connection, Engine

from dominus.errors import ClaimLostError, PermanentJobError
from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.abort import AbortReason
from dominus.jobs.context import JobContext
from dominus.jobs.registry import HandlerRegistry
from dominus.pipeline.model import (
    FINISHED_RUN_STATUSES,
    PIPELINE_RUN,
    STAGES,
    PipelineRunPayload,
    RunStatus,
    Stage,
)
from dominus.pipeline.runner import PipelineRunner
from dominus.pipeline.settings import pipeline_options
from dominus.pipeline.store import PipelineStore, RunNotFoundError, RunRecord
from dominus.providers.gate_waits import ProgressWithWaits
from dominus.providers.setup import open_providers

# A big run takes a while; a worker that dies mid-run is reclaimed and the retry resumes from
# the last checkpoint, so a few attempts are cheap.
PIPELINE_MAX_ATTEMPTS = 3


def register_pipeline_run(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    def handle(payload: PipelineRunPayload, context: JobContext) -> dict[str, Any]:
        return run_pipeline_job(payload.run_id, context, dependencies)

    # A run's job is created with its run row, in one transaction (PipelineService.submit); a
    # PIPELINE_RUN enqueued on its own would point at a run that is not its own.
    registry.register(
        PIPELINE_RUN,
        handle,
        PipelineRunPayload,
        max_attempts=PIPELINE_MAX_ATTEMPTS,
        enqueue_via="POST /api/v1/runs or `dominus run`",
    )


def run_pipeline_job(
    run_id: int, context: JobContext, dependencies: HandlerDependencies
) -> dict[str, Any]:
    store = fenced_pipeline_store(context, dependencies.engine)
    settings = dependencies.settings
    run = run_of_job(store, run_id, context.job.id)
    if run.status is RunStatus.COMPLETED:
        # Its own job again after the run was finished (the worker died before recording the
        # job's completion): the run's results stand; running it again would replace them.
        return run_result(run)

    report = ProgressWithWaits(context.progress)

    def progress(stage: Stage, number: int, done: int, total: int) -> None:
        report(
            run_id=run_id,
            stage=stage.value,
            stage_number=number,
            stages=len(STAGES),
            done=done,
            total=total,
        )

    gate = report.gate(dependencies.rate_gate())
    with open_providers(settings, run.providers, gate=gate) as providers:
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


def fenced_pipeline_store(context: JobContext, engine: Engine) -> PipelineStore:
    """The pipeline's store writing through this attempt's fenced transactions, completing the
    job in the transaction that completes the run."""
    if context.transactions is None:  # a context built without a store (never by a worker)
        return PipelineStore(engine)

    def complete_job(connection: Connection, run: RunRecord) -> None:
        context.complete(connection, run_result(run))

    return PipelineStore(engine, begin=context.transaction, on_completed=complete_job)


def run_of_job(store: PipelineStore, run_id: int, job_id: int) -> RunRecord:
    """The run this job may run or resume, or PermanentJobError saying why it may not."""
    try:
        run = store.get_run(run_id)
    except RunNotFoundError:
        raise PermanentJobError(f"run {run_id} does not exist") from None
    if run.job_id == job_id:
        return run
    if run.status in FINISHED_RUN_STATUSES:
        when = run.finished_at.isoformat() if run.finished_at else "an unknown time"
        raise PermanentJobError(
            f"run {run_id} already {run.status.value} at {when}; start a new run"
        )
    owner = f"job {run.job_id}" if run.job_id is not None else "a `dominus run --sync` process"
    raise PermanentJobError(f"run {run_id} is {run.status.value} and belongs to {owner}")


def record_interruption(
    store: PipelineStore,
    run_id: int,
    reason: AbortReason | None,
    error: BaseException,
    dependencies: HandlerDependencies,
) -> None:
    """What the run row says when its job stops early. A worker shutdown or a lost claim leaves
    the run to the job's next attempt (which resumes from the checkpoints)."""
    if reason is AbortReason.LOST or isinstance(error, ClaimLostError):
        return  # another attempt owns the job (and the run) now
    with contextlib.suppress(ClaimLostError):  # lost meanwhile: the newer attempt reports
        _record_interruption(store, run_id, reason, error, dependencies)


def _record_interruption(
    store: PipelineStore,
    run_id: int,
    reason: AbortReason | None,
    error: BaseException,
    dependencies: HandlerDependencies,
) -> None:
    now = dependencies.clock()
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
