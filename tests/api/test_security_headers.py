"""Every answer, page or API, success or refusal, tells the browser not to frame it and to run
nothing but this origin's own files (a strict Content-Security-Policy); the Swagger UI page gets
a policy that lets its own inline script in, and nothing else from elsewhere. On SQLite and
PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from fastapi.testclient import TestClient
from starlette.routing import Route

from dominus.api.security_headers import PAGE_POLICY
from dominus.web.routes import ROUTERS
from tests.support.api import API, TOKEN

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# A value for each path parameter of the app's routes (the answer may be a 404: its headers
# are what is checked).
PATH_VALUES = {"domain": "example.com", "name": "nightly"}
DIRECTIVES = {
    "default-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy_directives(policy: str) -> dict[str, str]:
    return {
        name: value.strip()
        for name, _, value in (part.strip().partition(" ") for part in policy.split(";"))
    }


def assert_protected(response: object, path: str) -> None:
    headers = response.headers  # type: ignore[attr-defined]
    assert headers.get("x-frame-options") == "DENY", path
    assert headers.get("x-content-type-options") == "nosniff", path
    assert headers.get("referrer-policy") == "same-origin", path
    directives = policy_directives(headers.get("content-security-policy", ""))
    for name, value in DIRECTIVES.items():
        assert directives.get(name) == value, (path, name, directives)
    if path != f"{API}/docs":
        # The pages need nothing from elsewhere: no script, style or connection off this
        # origin, nothing inline (no 'unsafe-inline' anywhere in the policy).
        assert set(directives) <= set(DIRECTIVES) | {"img-src"}, (path, directives)
        assert directives.get("img-src") == "'self' data:", path


def concrete(path: str) -> str:
    return re.sub(r"\{(\w+)(:\w+)?\}", lambda found: PATH_VALUES.get(found.group(1), "1"), path)


def get_paths(client: TestClient) -> list[str]:
    """A concrete path for every GET route: the dashboard's pages and live streams (its
    routers), its static files, the API's operations (its OpenAPI document) and the document
    and its docs page themselves."""
    pages = [
        route.path
        for router in ROUTERS
        for route in router.routes
        if isinstance(route, Route) and "GET" in (route.methods or ())
    ]
    document = client.get(f"{API}/openapi.json").json()
    api = [path for path, operations in document["paths"].items() if "get" in operations]
    static = ["/static/dashboard.css", "/static/htmx.min.js"]
    return sorted(
        {concrete(path) for path in [*pages, *api, *static, f"{API}/openapi.json", f"{API}/docs"]}
    )


def test_every_get_route_answers_with_the_headers(client: TestClient) -> None:
    paths = get_paths(client)
    assert {"/", "/dead-letters-purge", "/live/overview", f"{API}/jobs", f"{API}/docs"} <= set(
        paths
    )
    # Every dashboard stream slot taken: a live page answers 429 at once instead of streaming
    # for ever (the headers are the same). The API's streams are for job and run 1: a 404.
    share = client.app.state.dashboard.streams  # type: ignore[attr-defined]
    taken = 0
    while share.try_open():
        taken += 1
    try:
        for path in paths:
            assert_protected(client.get(path), path)
    finally:
        for _ in range(taken):
            share.close()


@pytest.mark.parametrize("token", [None, TOKEN])
def test_refusals_carry_the_headers_too(make_client: object, token: str | None) -> None:
    client: TestClient = make_client() if token is None else make_client(DOMINUS_API_TOKEN=token)  # type: ignore[operator]
    answers = {
        "misdirected host": client.get("/", headers={"Host": "attacker.example"}),
        "cross-site post": client.post(
            "/dead-letters-purge", headers={"Origin": "http://attacker.example"}
        ),
        "no csrf token": client.post("/dead-letters-purge"),
        "unknown page": client.get("/no-such-page", follow_redirects=False),
        "unknown api path": client.get(f"{API}/no-such-thing"),
    }
    if token is not None:
        answers["no bearer token"] = client.get(f"{API}/jobs", headers={"Authorization": ""})
        answers["login needed"] = client.get("/jobs", follow_redirects=False)
    for name, response in answers.items():
        assert response.status_code >= 300, name
        assert_protected(response, name)


def test_the_docs_page_may_load_this_origin_and_its_own_inline_script_only(
    client: TestClient,
) -> None:
    response = client.get(f"{API}/docs")
    assert response.status_code == 200
    assert_protected(response, f"{API}/docs")
    directives = policy_directives(response.headers["content-security-policy"])
    [script] = re.findall(r"<script>(.*?)</script>", response.text, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    sources = directives["script-src"].split()
    assert f"'sha256-{digest}'" in sources
    assert "'unsafe-inline'" not in sources and "'unsafe-eval'" not in sources
    # Swagger UI is served from this origin (ADR 0055): no CDN, no other host.
    assert "://" not in response.headers["content-security-policy"]
    assert directives["img-src"] == "'self' data:"


def test_the_page_policy_is_the_documented_one() -> None:
    assert policy_directives(PAGE_POLICY) == DIRECTIVES | {"img-src": "'self' data:"}
