"""A PIPELINE_RUN attempt that lost its job cannot write beside the attempt that replaced it
(ADR 0024), on SQLite and PostgreSQL.

Attempt 1 is reclaimed while its DNS stage runs (its worker went silent); attempt 2 claims the
job, resumes from attempt 1's generate checkpoint (written while attempt 1 still held the job)
and completes the run and its job in one transaction. Attempt 1 then finishes its DNS stage:
its checkpoint is refused with ClaimLostError, and the run, its checkpoints, its scores and the
job are exactly what attempt 2 left.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, func, select

from dominus.errors import ClaimLostError
from dominus.handlers.pipeline_run import fenced_pipeline_store, run_result
from dominus.jobs import AbortReason, JobStatus, SqlJobStore
from dominus.jobs.abort import AbortSignal
from dominus.jobs.context import HandlerTransactions, JobContext, ProgressReporter
from dominus.jobs.model import Job, NewJob
from dominus.pipeline.model import PIPELINE_RUN, RunInput, RunStatus, Stage
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore
from dominus.providers.offline import offline_providers
from dominus.schema.tables import pipeline_checkpoints, scoring_runs
from tests.support.clock import FakeClock

pytestmark = pytest.mark.backends("sqlite", "postgresql")


MAX_AGE = 60.0
INPUT = RunInput(keywords=["home gym", "solar panels"], brandable=["zentrova", "nikeshoes"])


def context_for(store: SqlJobStore, job: Job, clock: FakeClock) -> JobContext:
    abort = AbortSignal()
    reporter = ProgressReporter(job.claim, store.record_progress, clock, 1.0, on_lost=lambda: None)
    return JobContext(
        job=job,
        abort=abort,
        logger=None,  # type: ignore[arg-type]
        progress_reporter=reporter,
        transactions=HandlerTransactions(store, job, clock, abort, reporter),
    )


def runner_for(context: JobContext, engine: Engine, clock: FakeClock, **kw: Any) -> PipelineRunner:
    return PipelineRunner(
        fenced_pipeline_store(context, engine),
        offline_providers(),
        PipelineOptions(),
        clock=clock,
        stop=context.abort,
        **kw,
    )


def snapshot(engine: Engine, run_id: int) -> dict[str, Any]:
    with engine.connect() as connection:
        checkpoints = {
            row.stage: (row.data, row.saved_at)
            for row in connection.execute(
                select(pipeline_checkpoints).where(pipeline_checkpoints.c.run_id == run_id)
            )
        }
        scores = connection.execute(
            select(func.count()).where(scoring_runs.c.run_id == run_id)
        ).scalar_one()
    run = PipelineStore(engine).get_run(run_id)
    return {"checkpoints": checkpoints, "scores": scores, "run": run}


def test_a_reclaimed_attempts_late_checkpoint_is_refused(engine: Engine, backend: str) -> None:
    clock = FakeClock()
    jobs = SqlJobStore(engine)

    def enqueue(connection: Connection, run_id: int) -> int:
        job = NewJob(PIPELINE_RUN, {"run_id": run_id}, 0, 3, clock())
        return jobs.enqueue([job], clock(), connection=connection)[0].job_id

    run = PipelineStore(engine).create_run(INPUT, "sample", clock(), enqueue=enqueue)
    [first] = jobs.claim("w1", [PIPELINE_RUN], 1, clock())
    attempt_1 = context_for(jobs, first, clock)
    replaced: dict[str, Any] = {}

    def reclaim_and_rerun(stage: Stage, _number: int, _done: int, _total: int) -> None:
        if stage is not Stage.DNS or replaced:
            return
        replaced["started"] = True
        clock.advance(MAX_AGE + 1)  # attempt 1's worker stays silent that long
        [reclaimed] = jobs.reclaim_stale(clock(), MAX_AGE, lambda _type, _attempt: 0.0)
        assert reclaimed.job_id == first.id
        [second] = jobs.claim("w2", [PIPELINE_RUN], 1, clock())
        attempt_2 = context_for(jobs, second, clock)
        replaced["run"] = runner_for(attempt_2, engine, clock).run(run.id)
        replaced["context"] = attempt_2
        replaced["after"] = snapshot(engine, run.id)

    with pytest.raises(ClaimLostError):
        runner_for(attempt_1, engine, clock, on_progress=reclaim_and_rerun).run(run.id)

    after = replaced["after"]
    assert snapshot(engine, run.id) == after
    assert after["run"].status is RunStatus.COMPLETED
    assert set(after["checkpoints"]) == {stage.value for stage in Stage}
    assert after["scores"] > 0
    assert attempt_1.abort.reason is AbortReason.LOST
    # Attempt 2 completed the job in the run's own transaction.
    assert replaced["context"].completed_in_transaction
    job = jobs.get_job(first.id)
    assert (job.status, job.attempts, job.locked_by) == (JobStatus.COMPLETED, 2, "w2")
    assert job.result == run_result(after["run"])
    # Attempt 1 cannot complete or fail the run either.
    late = fenced_pipeline_store(attempt_1, engine)
    with pytest.raises(ClaimLostError):
        late.finish_run(run.id, RunStatus.FAILED, clock(), error="attempt 1 gave up")
    with pytest.raises(ClaimLostError):
        late.complete_run(run.id, [], [], {"candidates": 0}, clock())
    assert snapshot(engine, run.id) == after


def test_the_generate_checkpoint_of_the_lost_attempt_was_written_while_it_held_the_job(
    engine: Engine, backend: str
) -> None:
    """Writes made before the claim was lost stand: they were fenced when they committed."""
    clock = FakeClock()
    jobs = SqlJobStore(engine)
    run = PipelineStore(engine).create_run(
        INPUT,
        "sample",
        clock(),
        enqueue=lambda connection, run_id: (
            jobs.enqueue(
                [NewJob(PIPELINE_RUN, {"run_id": run_id}, 0, 3, clock())],
                clock(),
                connection=connection,
            )[0].job_id
        ),
    )
    [first] = jobs.claim("w1", [PIPELINE_RUN], 1, clock())
    attempt_1 = context_for(jobs, first, clock)
    stop_at = clock() + timedelta(seconds=1)

    def stop_after_generate(stage: Stage, *_: int) -> None:
        if stage is Stage.DNS:
            clock.now = stop_at
            attempt_1.abort.set(AbortReason.SHUTDOWN)

    with pytest.raises(Exception, match="stopped"):
        runner_for(attempt_1, engine, clock, on_progress=stop_after_generate).run(run.id)
    with engine.connect() as connection:
        stages = set(
            connection.execute(
                select(pipeline_checkpoints.c.stage).where(pipeline_checkpoints.c.run_id == run.id)
            ).scalars()
        )
    assert stages == {Stage.GENERATE.value}
