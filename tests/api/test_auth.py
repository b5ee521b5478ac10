"""Bearer-token authentication, on and off, and `dominus serve`'s refusal to listen on a
non-loopback address without a token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API, TOKEN, assert_error, prepare, runtime_of
from tests.support.serving import ServeProcess, refused_serve, serve_env

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# Every /api/v1 endpoint: (method, path, JSON body). Ids are filled in by `prepared_ids`.
ENDPOINTS: list[tuple[str, str, Any]] = [
    ("POST", "/jobs", {"type": "diag.noop"}),
    ("GET", "/jobs", None),
    ("GET", "/jobs/{pending}", None),
    ("GET", "/jobs/{pending}/events", None),
    ("GET", "/jobs/{finished}/stream", None),
    ("POST", "/jobs/{pending}/cancel", None),
    ("POST", "/jobs/{cancelled}/retry", None),
    ("GET", "/dlq", None),
    ("GET", "/dlq/{entry}", None),
    ("POST", "/dlq/{entry}/requeue", None),
    ("DELETE", "/dlq?older_than_days=30", None),
    ("GET", "/queue/stats", None),
    ("GET", "/queues", None),
    ("POST", "/queues/mail/pause", None),
    ("POST", "/queues/mail/resume", None),
    ("GET", "/workers", None),
    ("GET", "/metrics", None),
]
ENDPOINT_IDS = [f"{method} {path}" for method, path, _ in ENDPOINTS]


def call(
    client: TestClient,
    method: str,
    path: str,
    body: Any,
    ids: dict[str, int],
    headers: dict[str, str] | None = None,
) -> Any:
    return client.request(method, f"{API}{path.format(**ids)}", json=body, headers=headers)


def assert_unauthorized(response: Any) -> None:
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_with_a_token_every_endpoint_needs_it(
    authed_client: TestClient, method: str, path: str, body: Any
) -> None:
    ids = prepare(authed_client)
    runtime = runtime_of(authed_client)
    before = runtime.store.metric_totals()
    jobs_before = runtime.store.list_jobs(limit=1000)

    assert_unauthorized(call(authed_client, method, path, body, ids))
    for header in (
        "Bearer wrong-token",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        "Bearer ",
        "Bearer",
        f"Basic {TOKEN}",
        TOKEN,
        f"Token {TOKEN}",
    ):
        response = call(authed_client, method, path, body, ids, {"Authorization": header})
        assert_unauthorized(response)
    # Nothing was done for the unauthenticated requests.
    assert runtime.store.list_jobs(limit=1000) == jobs_before
    assert runtime.store.metric_totals() == before

    response = call(authed_client, method, path, body, ids, {"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code in (200, 202), (response.status_code, response.text)


def test_the_scheme_is_case_insensitive(authed_client: TestClient) -> None:
    for scheme in ("bearer", "BEARER", "Bearer"):
        response = authed_client.get(
            f"{API}/queue/stats", headers={"Authorization": f"{scheme} {TOKEN}"}
        )
        assert response.status_code == 200, scheme


def test_with_a_token_invalid_requests_are_401_before_validation(
    authed_client: TestClient,
) -> None:
    """An unauthenticated client learns nothing about what the API would accept."""
    ids = {"pending": 1, "cancelled": 1, "finished": 1, "entry": 1}
    for method, path, body in [
        ("POST", "/jobs", {"type": "no.such.type"}),
        ("POST", "/jobs", {"type": "diag.noop", "colour": "red"}),
        ("GET", "/jobs?limit=0", None),
        ("GET", "/jobs/abc", None),
        ("GET", "/jobs/424242", None),
        ("POST", "/dlq/424242/requeue", None),
    ]:
        assert_unauthorized(call(authed_client, method, path, body, ids))


def test_with_a_token_malformed_json_is_401(authed_client: TestClient) -> None:
    response = authed_client.post(
        f"{API}/jobs", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert_unauthorized(response)


def test_the_stream_with_a_token(authed_client: TestClient) -> None:
    ids = prepare(authed_client)
    assert_unauthorized(authed_client.get(f"{API}/jobs/{ids['finished']}/stream"))
    response = authed_client.get(
        f"{API}/jobs/{ids['finished']}/stream", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 200
    assert "event: end" in response.text


def test_the_openapi_schema_and_docs_stay_public(authed_client: TestClient) -> None:
    """ADR 0006: the token guards the API; the schema and its docs page stay public."""
    assert authed_client.get(f"{API}/openapi.json").status_code == 200
    assert authed_client.get(f"{API}/docs").status_code == 200


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=ENDPOINT_IDS)
def test_without_a_token_no_header_is_needed(
    client: TestClient, method: str, path: str, body: Any
) -> None:
    ids = prepare(client)
    response = call(client, method, path, body, ids)
    assert response.status_code in (200, 202), (response.status_code, response.text)
    # A header sent anyway is ignored.
    response = client.get(f"{API}/queue/stats", headers={"Authorization": "Bearer whatever"})
    assert response.status_code == 200


# --- dominus serve ---------------------------------------------------------------------------


def test_serve_refuses_a_public_address_without_a_token(database_url: str, tmp_path: Any) -> None:
    for host in ("0.0.0.0", "192.0.2.1", "example.com"):
        done = refused_serve(database_url, tmp_path, "--host", host)
        assert done.code == 2, (host, str(done))
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("error: ")
        assert "DOMINUS_API_TOKEN" in lines[0]
        assert host in lines[0]


def test_serve_on_a_public_address_with_a_token(
    database_url: str, serve_processes: Callable[..., ServeProcess]
) -> None:
    token = "sixteen-chars-ok"  # the shortest token allowed off loopback
    server = serve_processes(
        "--host", "0.0.0.0", env=serve_env(database_url, DOMINUS_API_TOKEN=token), token=token
    )
    server.wait_ready()
    with server.http() as http:
        assert http.get(f"{API}/health").json()["status"] == "ok"
        assert http.get(f"{API}/ready").status_code == 200
        # The probes answer a load balancer without the token; the rest does not.
        anonymous = {"Authorization": ""}
        probe = http.get(f"{API}/health", headers=anonymous)
        assert probe.status_code == 200, (probe.status_code, probe.text)
        assert probe.json()["status"] == "ok", probe.text
        assert http.get(f"{API}/ready", headers=anonymous).status_code == 200
        assert_unauthorized(http.get(f"{API}/queue/stats", headers=anonymous))
    assert server.terminate_and_wait(10) == 0, server.output()
