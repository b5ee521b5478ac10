"""PIPELINE_RUN jobs belong to their run, on SQLite and PostgreSQL.

A run's job is created with the run (`POST /runs`); the generic `POST /jobs` refuses the type and
the schema does not offer it. A PIPELINE_RUN job that is not its run's own (enqueued by code, or
before the refusal existed) fails permanently, without a retry, and leaves the run untouched,
while the run's own job still resumes after a crash or a failure, and `jobs retry` and
`dlq requeue` still rerun it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from dominus.jobs import EventKind, JobStatus
from dominus.jobs.model import Failed
from dominus.pipeline.model import PIPELINE_RUN, RunStatus
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore, RunRecord
from dominus.providers.offline import offline_providers
from dominus.runtime import Runtime
from dominus.schema.tables import job_queue
from tests.support.api import API, assert_error, finish_jobs, runtime_of

pytestmark = pytest.mark.backends("sqlite", "postgresql")


BODY = {"keywords": ["home gym"], "brandableNames": ["zentrova"]}
NO_SUCH_RUN = 424242


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def create(client: TestClient) -> dict[str, Any]:
    response = client.post(f"{API}/runs", json=BODY)
    assert response.status_code == 202, response.text
    created: dict[str, Any] = response.json()
    return created


def the_run(client: TestClient, run_id: int) -> RunRecord:
    return PipelineStore(runtime_of(client).engine).get_run(run_id)


def completed_run(client: TestClient) -> RunRecord:
    created = create(client)
    finish_jobs(runtime_of(client))
    run = the_run(client, created["run_id"])
    assert run.status is RunStatus.COMPLETED
    return run


@pytest.mark.parametrize("existing", [True, False])
def test_post_jobs_refuses_pipeline_run(client: TestClient, existing: bool) -> None:
    run_id = completed_run(client).id if existing else NO_SUCH_RUN
    jobs_before = client.get(f"{API}/jobs").json()["items"]
    response = client.post(
        f"{API}/jobs", json={"type": PIPELINE_RUN, "payload": {"run_id": run_id}}
    )
    error = assert_error(response, 422, "not_enqueueable")
    assert "POST /api/v1/runs" in error["message"] and "dominus run" in error["message"]
    assert client.get(f"{API}/jobs").json()["items"] == jobs_before


def test_the_schema_does_not_offer_pipeline_run(client: TestClient) -> None:
    schemas = client.get(f"{API}/openapi.json").json()["components"]["schemas"]
    alternatives = [ref["$ref"].rsplit("/", 1)[1] for ref in schemas["EnqueueBody"]["oneOf"]]
    types = {schemas[name]["properties"]["type"]["const"] for name in alternatives}
    assert PIPELINE_RUN not in types
    assert "diag.noop" in types
    assert "EnqueuePipelineRun" not in schemas


def foreign_job(runtime: Runtime, run_id: int) -> int:
    """A PIPELINE_RUN job that is not its run's own, as code (or an older release) could make."""
    queue = runtime.queue()
    return queue.enqueue_job(PIPELINE_RUN, {"run_id": run_id}, internal=True).job_id


def test_a_job_for_a_finished_or_unknown_run_fails_permanently(client: TestClient) -> None:
    runtime = runtime_of(client)
    run = completed_run(client)
    rerun = foreign_job(runtime, run.id)
    unknown = foreign_job(runtime, NO_SUCH_RUN)
    finish_jobs(runtime)

    assert the_run(client, run.id) == run  # not rerun: finished_at, results, all unchanged
    assert run.finished_at is not None
    reasons = {
        rerun: f"run {run.id} already completed at {run.finished_at.isoformat()}; start a new run",
        unknown: f"run {NO_SUCH_RUN} does not exist",
    }
    entries = {entry.job_id: entry for entry in runtime.store.list_dead_letters()}
    for job_id, reason in reasons.items():
        job = runtime.store.get_job(job_id)
        assert (job.status, job.attempts) == (JobStatus.FAILED, 1), job
        assert job.last_error == f"PermanentJobError: {reason}"
        assert entries[job_id].last_error == job.last_error
        events = runtime.store.job_events(job_id)
        assert [event.kind for event in events] == [EventKind.FAILED, EventKind.DEAD_LETTERED]
        assert (events[0].details or {}).get("permanent") is True
        assert "permanent error on attempt 1 of 3, not retried" in (events[1].message or "")


def test_a_job_for_another_jobs_active_run_fails_permanently(client: TestClient) -> None:
    runtime = runtime_of(client)
    created = create(client)  # pending, its own job not run yet
    intruder = foreign_job(runtime, created["run_id"])
    runtime.store.request_cancel(created["job_id"], runtime.clock())  # keep the own job out
    finish_jobs(runtime)
    job = runtime.store.get_job(intruder)
    assert (job.status, job.attempts) == (JobStatus.FAILED, 1)
    assert job.last_error == (
        f"PermanentJobError: run {created['run_id']} is pending and belongs to job "
        f"{created['job_id']}"
    )
    assert the_run(client, created["run_id"]).status is RunStatus.PENDING


def test_its_own_job_resumes_after_a_failed_attempt(client: TestClient) -> None:
    """The handler marks the run failed when an attempt raises; the retry must still run it."""
    runtime = runtime_of(client)
    created = create(client)
    [job] = runtime.store.claim("w-crashed", [PIPELINE_RUN], 1, runtime.clock())
    runs = PipelineStore(runtime.engine)
    runs.finish_run(created["run_id"], RunStatus.FAILED, runtime.clock(), error="boom")
    failure = Failed(job.claim, error="boom", retry_at=runtime.clock(), job_type=PIPELINE_RUN)
    assert runtime.store.settle([failure], runtime.clock())[0] == [True]
    finish_jobs(runtime)
    assert runs.get_run(created["run_id"]).status is RunStatus.COMPLETED
    done = runtime.store.get_job(job.id)
    assert (done.status, done.attempts) == (JobStatus.COMPLETED, 2)


def test_jobs_retry_and_dlq_requeue_rerun_its_own_job(client: TestClient) -> None:
    runtime = runtime_of(client)
    cancelled = create(client)
    client.post(f"{API}/jobs/{cancelled['job_id']}/cancel")
    dead = create(client)
    [job] = runtime.store.claim("w-gone", [PIPELINE_RUN], 1, runtime.clock())
    assert job.id == dead["job_id"]
    PipelineStore(runtime.engine).finish_run(
        dead["run_id"], RunStatus.FAILED, runtime.clock(), error="gave up"
    )
    given_up = Failed(job.claim, error="gave up", permanent=True, job_type=PIPELINE_RUN)
    runtime.store.settle([given_up], runtime.clock())
    [entry] = runtime.store.list_dead_letters()

    assert client.post(f"{API}/jobs/{cancelled['job_id']}/retry").status_code == 200
    assert client.post(f"{API}/dlq/{entry.id}/requeue").status_code == 200
    finish_jobs(runtime)
    for created in (cancelled, dead):
        assert the_run(client, created["run_id"]).status is RunStatus.COMPLETED
        assert runtime.store.get_job(created["job_id"]).status is JobStatus.COMPLETED


def test_its_own_job_after_the_run_finished_keeps_the_results(client: TestClient) -> None:
    """The worker finished the run, then died before recording its job's completion: the
    reclaimed job completes with the run's result and does not run it again."""
    runtime = runtime_of(client)
    created = create(client)
    [job] = runtime.store.claim("w-died", [PIPELINE_RUN], 1, runtime.clock())
    runs = PipelineStore(runtime.engine)
    stop = threading.Event()
    PipelineRunner(
        runs, offline_providers(), PipelineOptions(), clock=runtime.clock, stop=stop
    ).run(created["run_id"])
    finished = runs.get_run(created["run_id"])
    with runtime.engine.begin() as connection:  # its heartbeat stopped long ago
        connection.execute(
            update(job_queue)
            .where(job_queue.c.id == job.id)
            .values(heartbeat_at=runtime.clock() - timedelta(hours=1))
        )
    [reclaimed] = runtime.store.reclaim_stale(runtime.clock(), 60, lambda _type, _attempt: 0)
    assert reclaimed.job_id == job.id
    finish_jobs(runtime)
    assert runs.get_run(created["run_id"]) == finished
    done = runtime.store.get_job(job.id)
    assert (done.status, done.attempts) == (JobStatus.COMPLETED, 2)
    assert done.result["run_id"] == created["run_id"]
    assert done.result["status"] == "completed"
