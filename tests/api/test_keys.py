"""Rate-limit keys through the API and the dashboard (ADR 0053), on SQLite and PostgreSQL:
`GET /api/v1/keys`, `POST /api/v1/keys/{key}/resume` (the token applies as on every mutation;
an unknown key is a 404, a malformed one a 422), and the Queues page's paused keys with a
Resume button that needs the page's CSRF token."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from dominus.runtime import Runtime
from tests.support.api import API, TOKEN, assert_error
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite", "postgresql")

KEY = "rdap:rdap.example.test"
HEADERS = {"X-Requested-By": "test"}


def test_keys_lists_limits_and_pauses(client: TestClient, runtime: Runtime) -> None:
    assert client.get(f"{API}/keys").json() == []
    runtime.limiters.configure(KEY, "10/s")
    runtime.limiters.pause(KEY, 3600, "429 Too Many Requests")
    response = client.get(f"{API}/keys")
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    [key] = response.json()
    assert set(key) == {
        "key",
        "limit",
        "limit_count",
        "period_seconds",
        "paused",
        "paused_until",
        "pause_reason",
        "updated_at",
        "brought_forward",
    }
    assert (key["key"], key["limit"], key["limit_count"], key["period_seconds"]) == (
        KEY,
        "10/s",
        10,
        1.0,
    )
    assert (key["paused"], key["pause_reason"]) == (True, "429 Too Many Requests")


def test_resume_ends_a_pause_and_brings_the_key_s_jobs_forward(
    client: TestClient, runtime: Runtime
) -> None:
    runtime.limiters.pause(KEY, 3600, "down")
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    body = {"type": "diag.noop", "rate_key": KEY, "run_at": later}
    enqueued = client.post(f"{API}/jobs", json=body, headers=HEADERS)
    assert enqueued.status_code == 202, enqueued.text
    assert enqueued.json()["rate_key"] == KEY
    resumed = client.post(f"{API}/keys/{KEY}/resume", headers=HEADERS)
    assert resumed.status_code == 200, resumed.text
    assert (resumed.json()["paused"], resumed.json()["paused_until"]) == (False, None)
    assert resumed.json()["brought_forward"] == 1
    job = client.get(f"{API}/jobs/{enqueued.json()['id']}").json()
    assert datetime.fromisoformat(job["run_at"]) < datetime.fromisoformat(later)
    assert runtime.limiters.try_acquire(KEY) is None


def test_resume_of_an_unknown_key_is_a_404_and_a_bad_one_a_422(client: TestClient) -> None:
    assert_error(client.post(f"{API}/keys/never:seen/resume", headers=HEADERS), 404)
    assert_error(client.post(f"{API}/keys/a%20b/resume", headers=HEADERS), 422)
    assert client.get(f"{API}/keys").json() == []


def test_resume_needs_the_token_when_one_is_set(
    authed_client: TestClient, runtime: Runtime
) -> None:
    runtime.limiters.pause(KEY, 3600, "down")
    assert_error(authed_client.post(f"{API}/keys/{KEY}/resume"), 401, "unauthorized")
    assert runtime.limiters.get(KEY).paused is True
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert authed_client.post(f"{API}/keys/{KEY}/resume", headers=headers).status_code == 200
    assert runtime.limiters.get(KEY).paused is False


def test_the_queues_page_lists_paused_keys_and_resumes_with_its_csrf_token(
    make_client: Callable[..., TestClient], runtime: Runtime
) -> None:
    client = make_client()
    runtime.limiters.configure("whois:free.example.test", "1/s")
    assert "No key is paused." in client.get("/queues").text
    runtime.limiters.pause(KEY, 3600, "429 Too Many Requests")
    page = client.get("/queues").text
    action = "/keys/rdap%3Ardap.example.test/resume"  # the key, URL-encoded
    assert f'action="{action}"' in page
    assert "429 Too Many Requests" in page
    assert "whois:free.example.test" not in page  # not paused: not listed
    token = csrf_of(page)
    assert post(client, action, None).status_code == 403
    assert runtime.limiters.get(KEY).paused is True
    response = post(client, action, token)
    assert response.status_code == 303
    assert response.headers["location"] == "/queues?notice=key-resumed"
    assert runtime.limiters.get(KEY).paused is False
    assert "No key is paused." in client.get("/queues").text
