"""With DOMINUS_API_TOKEN set, /health and /ready answer without it (a load balancer or an
orchestrator's probe has none), and what they answer names no host, path, user or secret; every
other endpoint, /metrics included, still needs the token. Failed logins, on the API and the
dashboard's form, are logged at WARNING with the client's address and never the token."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API, TOKEN
from tests.support.dashboard import csrf_of

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_the_probes_answer_without_the_token_and_say_nothing_sensitive(
    authed_client: TestClient, database_url: str
) -> None:
    health = authed_client.get(f"{API}/health")
    assert health.status_code == 200, health.text
    body = health.json()
    assert set(body) == {"status", "scheduler"} and body["status"] == "ok"
    assert set(body["scheduler"]) == {"status", "last_tick_at"}

    ready = authed_client.get(f"{API}/ready")
    assert ready.status_code == 200, ready.text
    body = ready.json()
    assert set(body) == {"status", "database", "schema_revision"}
    assert body["status"] == "ready"
    assert body["database"] in ("sqlite", "postgresql")  # the kind, never the URL
    for text in (health.text, ready.text):
        assert database_url not in text and TOKEN not in text
        assert "/" not in text.replace("\\/", "")  # no path, no URL
    # A wrong token on a probe is neither refused nor counted as a guess.
    wrong = {"Authorization": "Bearer wrong-token"}
    assert authed_client.get(f"{API}/health", headers=wrong).status_code == 200


def test_everything_else_still_needs_the_token(authed_client: TestClient) -> None:
    for path in ("/metrics", "/queue/stats", "/workers", "/jobs"):
        assert authed_client.get(f"{API}{path}").status_code == 401, path


def test_failed_logins_are_warnings_with_the_address_and_without_the_token(
    authed_client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    guess = "not-the-token-4f1c"
    with caplog.at_level(logging.INFO):
        refused = authed_client.get(f"{API}/jobs", headers={"Authorization": f"Bearer {guess}"})
        form = authed_client.get("/login")
        login = authed_client.post(
            "/login", data={"csrf_token": csrf_of(form.text), "token": guess, "next": "/"}
        )
    assert (refused.status_code, login.status_code) == (401, 401)
    failures = [r for r in caplog.records if "wrong API token" in r.getMessage()]
    assert [record.levelno for record in failures] == [logging.WARNING] * 2
    address = "testclient"  # what Starlette's test client reports as the client's address
    assert f"from {address} on '{API}/jobs'" in failures[0].getMessage()
    assert f"from {address} on '/login'" in failures[1].getMessage()
    assert not any(guess in record.getMessage() for record in caplog.records)
