"""The API's docs page works offline (ADR 0055): it references only this server's copy of
Swagger UI, which is served (with or without a token set), and the document declares the
bearer token, so the page has an Authorize button, and describes what the API does now."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API, TOKEN, assert_error

pytestmark = pytest.mark.backends("sqlite")

ASSETS = f"{API}/docs/assets"
CONTENT_TYPES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}


def referenced(html: str) -> list[str]:
    """Every address the page loads or points at (src, href, the document's url)."""
    return re.findall(r'(?:src|href)="([^"]*)"', html) + re.findall(r"url: '([^']*)'", html)


@pytest.mark.parametrize("token", [None, TOKEN])
def test_the_docs_page_loads_only_this_servers_assets(
    make_client: Callable[..., TestClient], token: str | None
) -> None:
    client = make_client() if token is None else make_client(DOMINUS_API_TOKEN=token)
    page = client.get(f"{API}/docs")
    assert page.status_code == 200
    addresses = referenced(page.text)
    assert sorted(addresses) == sorted(
        [*(f"{ASSETS}/{name}" for name in CONTENT_TYPES), f"{API}/openapi.json"]
    )
    assert "://" not in page.text  # no CDN, no validator, no other host of any kind
    for name, content_type in CONTENT_TYPES.items():
        asset = client.get(f"{ASSETS}/{name}")  # no Authorization header: public as the page
        assert asset.status_code == 200, name
        assert asset.headers["content-type"].split(";")[0] == content_type, name
        assert len(asset.content) > 500, name
    assert b"SwaggerUIBundle" in client.get(f"{ASSETS}/swagger-ui-bundle.js").content


def test_the_assets_prefix_opens_nothing_else(make_client: Callable[..., TestClient]) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    # A client may resolve the dots itself (then it asks for /api/v1/jobs: 401) or send them
    # as they are (then they stay inside the assets: 404); the jobs are never listed.
    for path in (f"{ASSETS}/../../jobs", f"{ASSETS}/%2e%2e/%2e%2e/jobs", f"{ASSETS}/nope.js"):
        response = client.get(path)
        assert response.status_code in (401, 404), path
    assert_error(client.get(f"{API}/jobs"), 401, "unauthorized")


def test_the_document_declares_the_bearer_token(make_client: Callable[..., TestClient]) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    document = client.get(f"{API}/openapi.json").json()
    scheme = document["components"]["securitySchemes"]["bearerToken"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    paths = document["paths"]
    assert paths["/api/v1/jobs"]["get"]["security"] == [{"bearerToken": []}]
    assert paths["/api/v1/jobs"]["post"]["security"] == [{"bearerToken": []}]
    assert paths["/api/v1/metrics"]["get"]["security"] == [{"bearerToken": []}]
    assert paths["/api/v1/health"]["get"]["security"] == []
    assert paths["/api/v1/ready"]["get"]["security"] == []


def test_without_a_token_nothing_claims_to_need_one(client: TestClient) -> None:
    document = client.get(f"{API}/openapi.json").json()
    assert "bearerToken" in document["components"]["securitySchemes"]  # Authorize is there
    operations = [op for ops in document["paths"].values() for op in ops.values()]
    assert operations and not any("security" in operation for operation in operations)


def test_the_description_says_what_the_api_does_now(client: TestClient) -> None:
    description = client.get(f"{API}/openapi.json").json()["info"]["description"]
    for subject in (
        "**jobs**",
        "**dead-letter queue**",
        "named queues",
        "**schedules**",
        "**runs**",
        "**score**",
        "**portfolio**",
        "**watchlist**",
        "**alerts**",
        "`/metrics`",
        "DOMINUS_API_READ_TOKEN",
        "DOMINUS_API_METRICS_TOKEN",
    ):
        assert subject in description, subject
    tags = {
        tag
        for ops in client.get(f"{API}/openapi.json").json()["paths"].values()
        for op in ops.values()
        for tag in op.get("tags", [])
    }
    # Every group of operations is named in the description (dead letters by its path).
    for tag in tags - {"operations"}:
        assert f"**{tag}**" in description or tag in description, tag
