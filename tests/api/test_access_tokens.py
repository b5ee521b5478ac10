"""The read-only and metrics-only tokens beside the API token (ADR 0055), on the API and the
dashboard, on SQLite and PostgreSQL: what each may do, the one-line 403 when it asks for more,
the warning line with the client's address (never the token), and the settings' refusals."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.api.security import MIN_PUBLIC_TOKEN_LENGTH
from dominus.cli.serve import _refuse_an_open_public_bind
from dominus.config import api_tokens
from dominus.errors import ConfigurationError
from tests.support.api import API, TOKEN, api_settings, assert_error, runtime_of
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite", "postgresql")

READ = "read-only-t0ken-of-length"
METRICS = "metrics-only-t0ken-of-length"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def tokens_client(make_client: Callable[..., TestClient]) -> TestClient:
    client = make_client(
        DOMINUS_API_TOKEN=TOKEN, DOMINUS_API_READ_TOKEN=READ, DOMINUS_API_METRICS_TOKEN=METRICS
    )
    client.follow_redirects = False
    return client


def job_count(client: TestClient) -> int:
    return len(runtime_of(client).store.list_jobs(limit=1000))


# --- the API ---------------------------------------------------------------------------------


def test_the_read_token_reads_everything_and_changes_nothing(
    tokens_client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    job = tokens_client.post(f"{API}/jobs", json={"type": "diag.noop"}, headers=bearer(TOKEN))
    assert job.status_code == 202
    job_id = job.json()["id"]
    for path in ("/jobs", f"/jobs/{job_id}", "/queue/stats", "/dlq", "/workers", "/metrics"):
        assert tokens_client.get(f"{API}{path}", headers=bearer(READ)).status_code == 200, path
    caplog.set_level(logging.WARNING, logger="dominus.api")
    refusals = [
        ("POST", "/jobs", {"type": "diag.noop"}),
        ("POST", f"/jobs/{job_id}/cancel", None),
        ("DELETE", "/dlq?older_than_days=30", None),
        ("POST", "/queues/mail/pause", None),
    ]
    before = job_count(tokens_client)
    for method, path, body in refusals:
        response = tokens_client.request(method, f"{API}{path}", json=body, headers=bearer(READ))
        assert_error(response, 403, "forbidden")
        message = response.json()["error"]["message"]
        assert "\n" not in message and "read-only" in message and method in message
    assert job_count(tokens_client) == before
    assert tokens_client.get(f"{API}/jobs/{job_id}", headers=bearer(READ)).json()["status"] == (
        "pending"
    )
    queues = tokens_client.get(f"{API}/queues", headers=bearer(READ)).json()
    assert not any(queue["paused"] for queue in queues), queues
    # The API's own warnings: a worker thread that an earlier test on the shared server left
    # behind may log to the capture too (its database dropped under it).
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name == "dominus.api"
    ]
    assert len(warnings) == len(refusals)
    assert all("testclient" in line for line in warnings)  # the client's address
    assert not any(READ in line or TOKEN in line for line in caplog.text.splitlines())


def test_the_metrics_token_reads_the_metrics_only(tokens_client: TestClient) -> None:
    response = tokens_client.get(f"{API}/metrics", headers=bearer(METRICS))
    assert response.status_code == 200
    assert "dominus_jobs" in response.text
    for method, path in (("GET", "/jobs"), ("GET", "/queue/stats"), ("POST", "/jobs")):
        answer = tokens_client.request(method, f"{API}{path}", headers=bearer(METRICS))
        assert_error(answer, 403, "forbidden")
        assert answer.json()["error"]["message"] == f"this token reads {API}/metrics only"


def test_the_api_token_still_does_everything_and_a_wrong_one_nothing(
    tokens_client: TestClient,
) -> None:
    assert tokens_client.post(f"{API}/jobs", json={"type": "diag.noop"}, headers=bearer(TOKEN))
    assert tokens_client.get(f"{API}/metrics", headers=bearer(TOKEN)).status_code == 200
    for wrong in (READ + "x", METRICS[:-1], f"{READ} {METRICS}"):
        assert_error(tokens_client.get(f"{API}/jobs", headers=bearer(wrong)), 401, "unauthorized")


# --- the settings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"DOMINUS_API_READ_TOKEN": READ}, "DOMINUS_API_READ_TOKEN is set without"),
        ({"DOMINUS_API_METRICS_TOKEN": METRICS}, "DOMINUS_API_METRICS_TOKEN is set without"),
        (
            {"DOMINUS_API_TOKEN": TOKEN, "DOMINUS_API_READ_TOKEN": TOKEN},
            "DOMINUS_API_READ_TOKEN is the same as DOMINUS_API_TOKEN",
        ),
        (
            {
                "DOMINUS_API_TOKEN": TOKEN,
                "DOMINUS_API_READ_TOKEN": READ,
                "DOMINUS_API_METRICS_TOKEN": READ,
            },
            "DOMINUS_API_METRICS_TOKEN is the same as DOMINUS_API_READ_TOKEN",
        ),
        (
            {"DOMINUS_API_TOKEN": TOKEN, "DOMINUS_API_READ_TOKEN": " "},
            "READ_TOKEN is set but empty",
        ),
        (
            {"DOMINUS_API_TOKEN": TOKEN, "DOMINUS_API_METRICS_TOKEN": " x"},
            "DOMINUS_API_METRICS_TOKEN begins or ends with whitespace",
        ),
    ],
)
def test_settings_refuse_tokens_that_cannot_work(
    database_url: str, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message) as raised:
        api_settings(database_url, **settings)
    assert READ not in str(raised.value) and TOKEN not in str(raised.value)


def test_off_loopback_every_token_must_be_long(database_url: str) -> None:
    short = "s" * (MIN_PUBLIC_TOKEN_LENGTH - 1)
    settings = api_settings(
        database_url, DOMINUS_API_TOKEN="f" * 32, DOMINUS_API_METRICS_TOKEN=short
    )
    with pytest.raises(ConfigurationError, match="DOMINUS_API_METRICS_TOKEN of 15 characters"):
        _refuse_an_open_public_bind("0.0.0.0", api_tokens(settings))
    _refuse_an_open_public_bind("127.0.0.1", api_tokens(settings))


# --- the dashboard ---------------------------------------------------------------------------


def log_in(client: TestClient, token: str) -> Any:
    form = client.get("/login")
    return client.post(
        "/login",
        data={"csrf_token": csrf_of(form.text), "token": token, "next": "/"},
        follow_redirects=False,
    )


def test_a_read_only_session_sees_the_pages_and_no_action(
    tokens_client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    job = tokens_client.post(
        f"{API}/jobs",
        json={"type": "diag.sleep", "payload": {"seconds": 60}},
        headers=bearer(TOKEN),
    ).json()
    assert log_in(tokens_client, READ).status_code == 303
    page = tokens_client.get(f"/jobs/{job['id']}")
    assert page.status_code == 200
    assert '<body hx-boost="true" class="read-only"' in page.text
    assert "Read-only session" in page.text
    caplog.set_level(logging.WARNING, logger="dominus.web")
    refused = post(tokens_client, f"/jobs/{job['id']}/cancel", csrf_of(page.text))
    assert refused.status_code == 403
    assert "read-only token" in refused.text
    assert tokens_client.get(f"{API}/jobs/{job['id']}", headers=bearer(TOKEN)).json()["status"] == (
        "pending"
    )
    assert "testclient" in caplog.text and READ not in caplog.text
    # The action forms are hidden by the stylesheet, logging out is not.
    css = tokens_client.get("/static/dashboard.css").text
    assert 'body.read-only form[method="post"]:not(.logout) { display: none; }' in css
    assert 'class="inline logout" method="post" action="/logout"' in page.text


def test_a_read_only_logout_leaves_the_api_tokens_sessions_alone(
    make_client: Callable[..., TestClient],
) -> None:
    settings = {"DOMINUS_API_TOKEN": TOKEN, "DOMINUS_API_READ_TOKEN": READ}
    operator, reader = make_client(**settings), make_client(**settings)
    operator.follow_redirects = reader.follow_redirects = False
    assert log_in(operator, TOKEN).status_code == 303
    assert log_in(reader, READ).status_code == 303
    csrf = csrf_of(reader.get("/workers").text)
    assert post(reader, "/logout", csrf).headers["location"] == "/login?notice=logged-out"
    assert reader.get("/workers").status_code == 303  # its cookie is gone
    assert operator.get("/workers").status_code == 200
    assert 'class="read-only"' not in operator.get("/workers").text


def test_the_metrics_token_opens_no_page(tokens_client: TestClient) -> None:
    response = log_in(tokens_client, METRICS)
    assert response.status_code == 403
    assert "dominus_session" not in response.headers.get("set-cookie", "")
    assert "reads /api/v1/metrics only" in response.text
    assert tokens_client.get("/workers").status_code == 303


def test_a_read_session_of_another_read_token_is_not_valid(
    make_client: Callable[..., TestClient],
) -> None:
    first = make_client(DOMINUS_API_TOKEN=TOKEN, DOMINUS_API_READ_TOKEN=READ)
    value = log_in(first, READ).cookies["dominus_session"]
    for changed in ({"DOMINUS_API_READ_TOKEN": READ + "-changed"}, {}):
        other = make_client(DOMINUS_API_TOKEN=TOKEN, **changed)
        other.cookies.set("dominus_session", value)
        assert other.get("/", follow_redirects=False).status_code == 303


# --- the metrics -----------------------------------------------------------------------------


def test_every_series_of_every_known_type_is_there_at_zero(tokens_client: TestClient) -> None:
    text = tokens_client.get(f"{API}/metrics", headers=bearer(METRICS)).text
    for status in ("pending", "running", "completed", "failed", "cancelled"):
        assert f'dominus_jobs{{status="{status}",type="diag.noop"}} 0.0' in text, status
    for family in ("dominus_jobs_enqueued_total", "dominus_job_attempts_failed_total"):
        assert f'{family}{{type="diag.fail"}} 0.0' in text, family
    assert 'dominus_job_duration_seconds_bucket{le="+Inf",type="diag.sleep"} 0.0' in text
    assert 'dominus_job_duration_seconds_count{type="diag.sleep"} 0.0' in text
    assert 'dominus_job_pickup_seconds_bucket{le="0.005",type="diag.sleep"} 0.0' in text
    assert 'dominus_job_pickup_seconds_bucket{le="+Inf",type="diag.sleep"} 0.0' in text
    assert 'dominus_job_pickup_seconds_sum{type="diag.sleep"} 0.0' in text
