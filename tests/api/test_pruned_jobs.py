"""A run or a schedule whose finished job PRUNE deleted says "pruned" instead of failing: the
run's documents, GET /runs/{id}/job, and the schedule's last job."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from dominus.jobs.clock import utc_now
from dominus.maintenance.prune import prune
from dominus.maintenance.prune_rules import Retention
from tests.support.api import API, assert_error, runtime_of
from tests.support.seeding import seed_run_and_schedule

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def backup_schedule(client: TestClient) -> dict[str, object]:
    [backup] = [s for s in client.get(f"{API}/schedules").json() if s["name"] == "backup"]
    return backup  # type: ignore[no-any-return]


def test_a_pruned_job_is_shown_as_pruned(client: TestClient) -> None:
    engine = runtime_of(client).engine
    run_id, job_id = seed_run_and_schedule(engine)
    assert client.get(f"{API}/runs/{run_id}").json()["job_status"] == "completed"
    assert client.get(f"{API}/runs/{run_id}/job").json()["id"] == job_id
    assert backup_schedule(client)["last_job_status"] == "completed"

    report = prune(engine, Retention(7, 30, 180), utc_now(), batch_size=100)
    assert report.counts["job_queue"] == 1 and report.counts["pipeline_runs"] == 0

    run = client.get(f"{API}/runs/{run_id}").json()
    assert (run["job_id"], run["job_status"], run["status"]) == (job_id, "pruned", "completed")
    [listed] = client.get(f"{API}/runs").json()["items"]
    assert listed["job_status"] == "pruned"
    error = assert_error(client.get(f"{API}/runs/{run_id}/job"), 404, "not_found")
    assert f"job {job_id} of run {run_id} was pruned" in error["message"]
    schedule = backup_schedule(client)
    assert (schedule["last_job_id"], schedule["last_job_status"]) == (job_id, "pruned")
