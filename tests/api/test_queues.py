"""Named queues through the API and the dashboard, on SQLite and PostgreSQL: a job's queue at
enqueue (and a bad name refused with 422), the queue list, pause and resume (the token applies
as on every mutation; the dashboard's buttons need the page's CSRF token), per-queue gauges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.runtime import Runtime
from tests.support.api import API, TOKEN, assert_error, enqueue, finish_jobs, get_job
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def queue_named(client: TestClient, name: str) -> dict[str, Any]:
    [queue] = [q for q in client.get(f"{API}/queues").json() if q["name"] == name]
    assert isinstance(queue, dict)
    return queue


def test_a_job_names_its_queue_or_gets_default(client: TestClient) -> None:
    assert enqueue(client, "diag.noop")["queue"] == "default"
    job = enqueue(client, "diag.noop", queue="mail")
    assert get_job(client, job["id"])["queue"] == "mail"


@pytest.mark.parametrize("bad", ["", "Mail", "a b", "x" * 65, 7, "mail/x"])
def test_a_bad_queue_name_is_a_422_and_nothing_is_written(client: TestClient, bad: object) -> None:
    response = client.post(f"{API}/jobs", json={"type": "diag.noop", "queue": bad})
    assert_error(response, 422)
    assert client.get(f"{API}/jobs").json()["items"] == []


def test_pause_and_resume_a_queue(client: TestClient, runtime: Runtime) -> None:
    job = enqueue(client, "diag.noop", queue="mail")
    other = enqueue(client, "diag.noop")
    paused = client.post(f"{API}/queues/mail/pause", headers={"X-Requested-By": "test"})
    assert paused.status_code == 200, paused.text
    assert (paused.json()["paused"], paused.json()["pending"]) == (True, 1)
    finish_jobs(runtime)
    assert get_job(client, job["id"])["status"] == "pending"
    assert get_job(client, other["id"])["status"] == "completed"
    assert queue_named(client, "mail")["paused"] is True
    [mail] = [q for q in client.get(f"{API}/queue/stats").json()["queues"] if q["name"] == "mail"]
    assert (mail["paused"], mail["pending"], mail["running"]) == (True, 1, 0)
    assert mail["paused_at"] is not None
    metrics = client.get(f"{API}/metrics").text
    assert 'dominus_queue_paused{queue="mail"} 1.0' in metrics
    assert 'dominus_queue_jobs{queue="mail",status="pending"} 1.0' in metrics
    resumed = client.post(f"{API}/queues/mail/resume", headers={"X-Requested-By": "test"})
    assert resumed.json()["paused"] is False
    finish_jobs(runtime)
    assert get_job(client, job["id"])["status"] == "completed"


def test_a_bad_queue_name_in_the_path_is_a_422(client: TestClient) -> None:
    response = client.post(f"{API}/queues/Bad!/pause", headers={"X-Requested-By": "test"})
    assert_error(response, 422)
    assert [q["name"] for q in client.get(f"{API}/queues").json()] == ["default"]


def test_pausing_needs_the_token_when_one_is_set(authed_client: TestClient) -> None:
    refused = authed_client.post(f"{API}/queues/mail/pause")
    assert_error(refused, 401, "unauthorized")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert authed_client.get(f"{API}/queues", headers=headers).json()[0]["paused"] is False
    assert [q["name"] for q in authed_client.get(f"{API}/queues", headers=headers).json()] == [
        "default"
    ]


def test_the_dashboard_pauses_and_resumes_with_its_csrf_token(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    enqueue(client, "diag.noop", queue="mail")
    page = client.get("/queues").text
    assert 'action="/queues/mail/pause"' in page
    token = csrf_of(page)
    assert post(client, "/queues/mail/pause", None).status_code == 403
    assert queue_named(client, "mail")["paused"] is False
    response = post(client, "/queues/mail/pause", token)
    assert response.status_code == 303
    assert response.headers["location"] == "/queues?notice=queue-paused"
    assert queue_named(client, "mail")["paused"] is True
    assert 'action="/queues/mail/resume"' in client.get("/queues").text
    assert post(client, "/queues/mail/resume", token).status_code == 303
    assert queue_named(client, "mail")["paused"] is False
