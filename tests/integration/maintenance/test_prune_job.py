"""The PRUNE job, run by a worker: a dry run and a prune, counts per table in the result,
progress after every step."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine

from dominus.jobs import JobQueue, JobStatus, SqlJobStore
from dominus.jobs.clock import utc_now
from tests.support.polling import wait_until
from tests.support.running_worker import RunningWorker
from tests.support.seeding import EXPECTED_COUNTS, seed

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_the_prune_job_reports_counts_per_table(
    engine: Engine,
    store: SqlJobStore,
    live_queue: JobQueue,
    start_worker: Callable[..., RunningWorker],
) -> None:
    seed(engine, utc_now())
    dry = live_queue.enqueue_job("PRUNE", {"dry_run": True}).job_id
    start_worker()
    job = wait_until(lambda: (job := store.get_job(dry)).status.is_terminal and job, 30)
    assert job.status is JobStatus.COMPLETED, job.last_error
    assert job.result is not None
    assert job.result["dry_run"] is True
    assert job.result["counts"] == EXPECTED_COUNTS
    real = live_queue.enqueue_job("PRUNE").job_id
    job = wait_until(lambda: (job := store.get_job(real)).status.is_terminal and job, 30)
    assert job.status is JobStatus.COMPLETED, job.last_error
    assert job.result is not None and job.result["counts"] == EXPECTED_COUNTS
    assert job.result["retention"] == {
        "job_retention_days": 7,
        "dlq_retention_days": 30,
        "pipeline_run_retention_days": 180,
    }
    assert job.progress is not None and job.progress["counts"] == EXPECTED_COUNTS
