"""Cross-site requests and DNS rebinding against the loopback API (ADR 0008):
the Host check (421), the JSON content type or `X-Requested-By` on every mutating request (415),
the Origin of a mutating request (403), and no CORS headers, ever.

The clients here send no `X-Requested-By` by themselves (unlike `make_client`'s). Tests that need
no database rows run once, on an app whose database is never touched."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from dominus.server import create_app
from tests.api.conftest import (
    API,
    TOKEN,
    ServeProcess,
    api_settings,
    assert_error,
    local_client,
    runtime_of,
    serve_env,
)
from tests.api.test_auth import prepare

BARE: dict[str, str] = {}  # no default headers at all
# The mutating endpoints that take no body: (method, path with the id to use).
BODILESS = [
    ("POST", "/jobs/{pending}/cancel"),
    ("POST", "/jobs/{cancelled}/retry"),
    ("POST", "/dlq/{entry}/requeue"),
    ("DELETE", "/dlq?older_than_days=0"),
]
BODILESS_IDS = [f"{method} {path}" for method, path in BODILESS]
ENQUEUE = b'{"type": "diag.noop"}'
PREFLIGHT = {
    "Origin": "http://attacker.example",
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type, x-requested-by, authorization",
}


@pytest.fixture
def make_app_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """`make(database_url=None, bind_host=None, **settings)`: an app and a bare client for it
    (on an unused SQLite file unless a database is given)."""
    clients: list[TestClient] = []

    def make(
        database_url: str | None = None, bind_host: str | None = None, **settings: Any
    ) -> TestClient:
        if database_url is None:
            (tmp_path / "never-used.db").touch()  # an app refuses a SQLite path with no file
        url = database_url or f"sqlite:///{tmp_path}/never-used.db"
        bind = {"bind_host": bind_host} if bind_host is not None else {}
        app = create_app(api_settings(url, **settings), **bind)
        client = local_client(app, headers=dict(BARE))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)
        runtime_of(client).engine.dispose()


@pytest.fixture
def bare_client(make_app_client: Callable[..., TestClient], database_url: str) -> TestClient:
    return make_app_client(database_url)


def job_rows(client: TestClient) -> list[Any]:
    return list(runtime_of(client).store.list_jobs(limit=1000))


def dead_letters(client: TestClient) -> list[Any]:
    return list(runtime_of(client).store.list_dead_letters(include_requeued=True))


def assert_no_cors(response: httpx.Response) -> None:
    granted = [name for name in response.headers if name.lower().startswith("access-control-")]
    assert not granted, response.headers


# --- mutating requests: JSON or the custom header --------------------------------------------


@pytest.mark.parametrize(("method", "path"), BODILESS, ids=BODILESS_IDS)
def test_a_bodiless_mutation_needs_the_json_type_or_the_custom_header(
    bare_client: TestClient, method: str, path: str
) -> None:
    """What a cross-site form or `fetch` can send is refused before anything changes."""
    ids = prepare(bare_client)
    url = f"{API}{path.format(**ids)}"
    before = (job_rows(bare_client), dead_letters(bare_client))
    for headers in (
        {},
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-www-form-urlencoded"},
        {"Content-Type": "multipart/form-data; boundary=x"},
        {"X-Requested-By": ""},
        {"X-Requested-By": "  "},
    ):
        response = bare_client.request(method, url, headers=headers)
        message = assert_error(response, 415, "unsupported_media_type")["message"]
        assert "application/json" in message and "X-Requested-By" in message
    assert (job_rows(bare_client), dead_letters(bare_client)) == before

    response = bare_client.request(method, url, headers={"X-Requested-By": "my-script"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON; charset=utf-8"])
def test_a_bodiless_mutation_with_the_json_type_needs_no_custom_header(
    bare_client: TestClient, content_type: str
) -> None:
    ids = prepare(bare_client)
    response = bare_client.post(
        f"{API}/jobs/{ids['pending']}/cancel", headers={"Content-Type": content_type}
    )
    assert response.status_code == 200, response.text


def test_a_body_must_be_json(bare_client: TestClient) -> None:
    """Refused before anything reads the body (it was a 422 after parsing), saying what to send."""
    for headers in (
        {},
        {"Content-Type": "text/plain"},
        {"Content-Type": "text/plain", "X-Requested-By": "x"},  # the header is for no body
        {"Content-Type": "application/x-www-form-urlencoded"},
        {"Content-Type": "application/jsonx"},
    ):
        response = bare_client.post(f"{API}/jobs", content=ENQUEUE, headers=headers)
        assert_error(response, 415, "unsupported_media_type")
        response = bare_client.post(f"{API}/runs", content=b'{"keywords": ["x"]}', headers=headers)
        assert_error(response, 415, "unsupported_media_type")
    assert job_rows(bare_client) == []

    for content_type in ("application/json", "application/json;charset=UTF-8"):
        response = bare_client.post(
            f"{API}/jobs", content=ENQUEUE, headers={"Content-Type": content_type}
        )
        assert response.status_code == 202, response.text


def test_unknown_routes_and_methods_keep_their_404_and_405(
    make_app_client: Callable[..., TestClient],
) -> None:
    """Nothing is changed by a method the path lacks: the router answers as before."""
    client = make_app_client()
    assert_error(client.post(f"{API}/no-such-thing"), 404, "not_found")
    response = client.put(f"{API}/jobs", content=b"x")
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, POST"


def test_the_guards_run_before_the_token(make_app_client: Callable[..., TestClient]) -> None:
    client = make_app_client(DOMINUS_API_TOKEN=TOKEN)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert_error(client.post(f"{API}/jobs/1/cancel", headers=auth), 415)
    assert_error(client.post(f"{API}/jobs/1/cancel"), 415)
    response = client.get(f"{API}/queue/stats", headers=auth | {"Host": "attacker.example"})
    assert_error(response, 421)
    assert_error(client.post(f"{API}/jobs/1/cancel", headers={"X-Requested-By": "x"}), 401)


# --- Origin ----------------------------------------------------------------------------------


def test_a_mutation_from_another_sites_page_is_refused(bare_client: TestClient) -> None:
    json_body = {"Content-Type": "application/json"}
    for origin in ("http://attacker.example", "https://attacker.example:8000", "null", "file://"):
        response = bare_client.post(
            f"{API}/jobs", content=ENQUEUE, headers=json_body | {"Origin": origin}
        )
        assert_error(response, 403, "forbidden_origin")
    assert job_rows(bare_client) == []
    # The API's own page (the docs at /api/v1/docs), on any loopback name.
    for origin in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"):
        response = bare_client.post(
            f"{API}/jobs", content=ENQUEUE, headers=json_body | {"Origin": origin}
        )
        assert response.status_code == 202, (origin, response.text)


# --- Host ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/queue/stats", "/jobs", "/health", "/metrics", "/openapi.json", "/docs", "/nothing"]
)
def test_a_rebinding_page_cannot_read_the_api(
    make_app_client: Callable[..., TestClient], path: str
) -> None:
    client = make_app_client()
    for host in (
        "attacker.example",
        "attacker.example:8000",
        "localhost.attacker.example",
        "127.0.0.1.nip.io:8000",
        "0.0.0.0:8000",
        "192.0.2.1",
        "[::1",
        "",
    ):
        response = client.get(f"{API}{path}", headers={"Host": host})
        message = assert_error(response, 421, "misdirected_request")["message"]
        assert "DOMINUS_ALLOWED_HOSTS" in message


def test_loopback_names_are_answered_on_any_port(
    make_app_client: Callable[..., TestClient],
) -> None:
    client = make_app_client()
    for host in ("localhost", "LOCALHOST:8000", "127.0.0.1", "127.0.0.1:9000", "127.1.2.3:80"):
        assert client.get(f"{API}/health", headers={"Host": host}).status_code == 200, host
    for host in ("[::1]", "[::1]:8000", "[0:0::1]:8000"):
        assert client.get(f"{API}/health", headers={"Host": host}).status_code == 200, host


def test_allowed_hosts_add_names_with_or_without_a_port(
    make_app_client: Callable[..., TestClient],
) -> None:
    client = make_app_client(
        DOMINUS_ALLOWED_HOSTS="dominus.example.com, pinned.example:8443,192.0.2.9"
    )
    for host in (
        "dominus.example.com",
        "Dominus.Example.COM:1234",
        "pinned.example:8443",
        "192.0.2.9:8000",
    ):
        assert client.get(f"{API}/health", headers={"Host": host}).status_code == 200, host
    for host in ("pinned.example", "pinned.example:8444", "example.com", "sub.dominus.example.com"):
        assert_error(client.get(f"{API}/health", headers={"Host": host}), 421)


def test_the_bound_address_is_answered(make_app_client: Callable[..., TestClient]) -> None:
    specific = make_app_client(bind_host="192.0.2.1")
    assert specific.get(f"{API}/health", headers={"Host": "192.0.2.1:8000"}).status_code == 200
    assert_error(specific.get(f"{API}/health", headers={"Host": "192.0.2.2:8000"}), 421)

    named = make_app_client(bind_host="Dominus.LAN")
    assert named.get(f"{API}/health", headers={"Host": "dominus.lan:8000"}).status_code == 200

    # Every interface: any address is this machine's, but a name must be allowed by name.
    everywhere = make_app_client(bind_host="0.0.0.0")
    for host in ("192.0.2.7:8000", "[2001:db8::1]:8000", "localhost"):
        assert everywhere.get(f"{API}/health", headers={"Host": host}).status_code == 200, host
    assert_error(everywhere.get(f"{API}/health", headers={"Host": "attacker.example"}), 421)


# --- CORS ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/jobs", "/jobs/1/cancel", "/queue/stats", "/openapi.json"])
def test_no_cors_headers_are_ever_sent(
    make_app_client: Callable[..., TestClient], path: str
) -> None:
    client = make_app_client()
    preflight = client.options(f"{API}{path}", headers=PREFLIGHT)
    assert preflight.status_code >= 400, preflight.text
    assert_no_cors(preflight)
    cross_origin = client.get(f"{API}{path}", headers={"Origin": "http://attacker.example"})
    assert_no_cors(cross_origin)


# --- dominus serve ---------------------------------------------------------------------------


def test_serve_checks_host_and_content_type_over_http(
    database_url: str, serve_processes: Callable[..., ServeProcess]
) -> None:
    server = serve_processes(env=serve_env(database_url))
    server.wait_ready()
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        assert http.get(f"{API}/jobs", headers={"Host": f"localhost:{server.port}"}).is_success
        response = http.get(f"{API}/jobs", headers={"Host": f"attacker.example:{server.port}"})
        assert_error(response, 421, "misdirected_request")
        assert_error(http.post(f"{API}/jobs/1/cancel"), 415, "unsupported_media_type")
        response = http.post(f"{API}/jobs/1/cancel", headers={"X-Requested-By": "curl"})
        assert_error(response, 404, "not_found")
    assert server.terminate_and_wait(10) == 0, server.output()
