"""/api/v1/schedules on both backends: the listing, a run by hand (deduplicated against the
schedule's pending job), enable/disable stored for every scheduler, and errors in the one shape:
an unknown schedule is a 404, an inactive or switched-off one a 409."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.api.scheduler_health import SchedulerProbe
from dominus.jobs import utc_now
from dominus.jobs.scheduling import SchedulerInfo, SchedulerLiveness, ScheduleStore
from tests.support.api import API, TOKEN, assert_error, finish_jobs, runtime_of
from tests.support.polling import wait_until

pytestmark = pytest.mark.backends("sqlite", "postgresql")


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
    # Every default schedule's job type is registered (issues 12-14): none is inactive.
    enabled = ["backup", "prune", "watchlist-poll", "renewal-check", "portfolio-rescore"]
    assert [name for name, doc in schedules.items() if doc["state"] == "enabled"] == enabled
    assert all(schedules[name]["inactive_reason"] is None for name in enabled)
    assert schedules["weight-tune"]["state"] == "off"  # until AUTO_TUNE_ENABLED
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


def test_a_switched_off_schedule_is_a_409(client: TestClient) -> None:
    # (An inactive schedule, whose job type is not registered, is refused the same way; every
    # default job type is registered now, so tests/contract/test_scheduler_loop.py covers it.)
    tune = assert_error(client.post(f"{API}/schedules/weight-tune/run"), 409, "conflict")
    assert "AUTO_TUNE_ENABLED" in tune["message"]
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


# --- the schedulers' last tick in /health ------------------------------------------------------


def test_health_reports_the_last_scheduler_tick(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    runtime = runtime_of(client)
    now = runtime.clock()
    store = ScheduleStore(runtime.engine)
    store.register_scheduler(SchedulerInfo("old", "host", 1, now, now - timedelta(minutes=5)))
    store.register_scheduler(SchedulerInfo("live", "host", 2, now, now - timedelta(seconds=3)))
    body = client.get(f"{API}/health").json()
    assert body["status"] == "ok"
    assert body["scheduler"]["status"] == "ok"
    assert datetime.fromisoformat(body["scheduler"]["last_tick_at"]) == now - timedelta(seconds=3)


def test_health_says_when_the_scheduler_went_quiet(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    runtime = runtime_of(client)
    ago = runtime.clock() - timedelta(minutes=3)
    ScheduleStore(runtime.engine).register_scheduler(SchedulerInfo("quiet", "host", 1, ago, ago))

    def scheduler_health() -> Any:
        return client.get(f"{API}/health").json()["scheduler"]

    # Health waits at most 0.5 s for its read of the schedulers table and says "unknown" past
    # that (a loaded machine's first read can be slower); the read's answer follows.
    wait_until(lambda: scheduler_health()["status"] != "unknown", 20, "the scheduler read")
    assert scheduler_health() == {"status": "stale", "last_tick_at": ago.isoformat()}


def test_health_answers_without_a_usable_database(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()  # not migrated: no schedulers table
    unreachable = "postgresql+psycopg://postgres@127.0.0.1:1/nothing"
    for database in (f"sqlite:///{empty}", unreachable):
        response = make_client(database=database).get(f"{API}/health")
        assert response.status_code == 200
        assert response.json() == {
            "status": "ok",
            "scheduler": {"status": "unknown", "last_tick_at": None},
        }


def test_health_does_not_wait_for_a_stuck_database() -> None:
    stuck = BlockedStore()
    probe = SchedulerProbe(stuck, utc_now)
    try:
        assert probe.health().status == "unknown"
        assert probe.health().status == "unknown"  # the stuck read is not started again
        assert stuck.reads == 1
    finally:
        stuck.release.set()
    wait_until(lambda: probe.health().status == "none", 5, "the read to finish")


class BlockedStore(ScheduleStore):
    """A store whose liveness read hangs until released, as on a database that stopped
    answering without closing the connection."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.reads = 0

    def liveness(self, alive_since: datetime) -> SchedulerLiveness:
        self.reads += 1
        self.release.wait(30)
        return SchedulerLiveness(last_tick_at=None, alive=0)
