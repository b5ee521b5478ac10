"""/api/v1/schedules on both backends: the listing, a run by hand (deduplicated against the
schedule's pending job), enable/disable stored for every scheduler, and errors in the one shape:
an unknown schedule is a 404, an inactive or switched-off one a 409."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from dominus.jobs.scheduling import ScheduleStore
from tests.api.conftest import API, TOKEN, assert_error, finish_jobs, runtime_of

DIAG_CRON = "0 4 * * *"


@pytest.fixture
def diag_client(make_client: Callable[..., TestClient]) -> TestClient:
    """An app with the diagnostic schedule switched on (it enqueues diag.noop)."""
    return make_client(SCHEDULER_DIAG_CRON=DIAG_CRON)


def test_the_schedules_are_listed(client: TestClient) -> None:
    response = client.get(f"{API}/schedules")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    schedules = {schedule["name"]: schedule for schedule in response.json()}
    assert list(schedules) == [
        "backup",
        "prune",
        "watchlist-poll",
        "renewal-check",
        "portfolio-rescore",
        "weight-tune",
        "diag",
    ]
    assert schedules["backup"]["state"] == "inactive"
    assert schedules["backup"]["inactive_reason"] == "job type BACKUP is not registered"
    assert schedules["diag"]["state"] == "off"


def test_run_enqueues_the_job_once_while_it_is_pending(diag_client: TestClient) -> None:
    response = diag_client.post(f"{API}/schedules/diag/run")
    assert response.status_code == 202, response.text
    job = response.json()
    assert response.headers["location"] == f"/api/v1/jobs/{job['id']}"
    assert (job["type"], job["status"], job["dedupe_key"]) == (
        "diag.noop",
        "pending",
        "schedule:diag:manual",
    )
    again = diag_client.post(f"{API}/schedules/diag/run")
    assert again.status_code == 200
    assert again.json()["id"] == job["id"]
    finish_jobs(runtime_of(diag_client))
    [diag] = [s for s in diag_client.get(f"{API}/schedules").json() if s["name"] == "diag"]
    assert (diag["last_job_id"], diag["last_job_status"]) == (job["id"], "completed")
    third = diag_client.post(f"{API}/schedules/diag/run")
    assert third.status_code == 202 and third.json()["id"] != job["id"]


def test_disable_and_enable(diag_client: TestClient) -> None:
    disabled = diag_client.post(f"{API}/schedules/diag/disable")
    assert disabled.status_code == 200, disabled.text
    assert (disabled.json()["state"], disabled.json()["enabled"]) == ("disabled", False)
    assert disabled.json()["next_fire_at"] is None
    row = ScheduleStore(runtime_of(diag_client).engine).rows()["diag"]
    assert row.enabled is False  # stored: every scheduler reads it
    enabled = diag_client.post(f"{API}/schedules/diag/enable").json()
    assert (enabled["state"], enabled["enabled"]) == ("enabled", True)
    assert enabled["next_fire_at"].endswith("T04:00:00+00:00")


@pytest.mark.parametrize("action", ["run", "enable", "disable"])
def test_an_unknown_schedule_is_a_404(client: TestClient, action: str) -> None:
    error = assert_error(client.post(f"{API}/schedules/nightly/{action}"), 404, "not_found")
    assert "no schedule named 'nightly'" in error["message"]


def test_an_inactive_or_switched_off_schedule_is_a_409(client: TestClient) -> None:
    inactive = assert_error(client.post(f"{API}/schedules/backup/run"), 409, "conflict")
    assert "job type BACKUP is not registered" in inactive["message"]
    off = assert_error(client.post(f"{API}/schedules/diag/enable"), 409, "conflict")
    assert "SCHEDULER_DIAG_CRON=off" in off["message"]
    assert client.get(f"{API}/jobs").json()["items"] == []


def test_a_post_without_body_needs_the_requested_by_header(diag_client: TestClient) -> None:
    response = diag_client.post(f"{API}/schedules/diag/run", headers={"X-Requested-By": ""})
    assert_error(response, 415, "unsupported_media_type")


def test_the_token_guards_the_schedules(make_client: Callable[..., TestClient]) -> None:
    authed = make_client(DOMINUS_API_TOKEN=TOKEN)
    assert_error(authed.get(f"{API}/schedules"), 401, "unauthorized")
    assert_error(authed.post(f"{API}/schedules/diag/run"), 401, "unauthorized")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert authed.get(f"{API}/schedules", headers=headers).status_code == 200
