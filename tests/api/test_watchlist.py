"""/api/v1/watchlist on both backends: add (201, Location; a name already watched is a 409, an
invalid one a 422 invalid_domain), list, get, delete (404 when not watched), in the one error
shape; the token and the request guards apply as everywhere."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.support.api import API, LOCAL_BASE_URL, assert_error
from tests.support.portfolio_rows import add_entry

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_a_domain_is_added_listed_and_removed(client: TestClient) -> None:
    response = client.post(f"{API}/watchlist", json={"domain": "CloudNest.com.", "notes": "x"})
    assert response.status_code == 201, response.text
    assert response.headers["location"] == f"{API}/watchlist/cloudnest.com"
    entry = response.json()
    assert (entry["domain"], entry["notes"], entry["last_status"], entry["notified"]) == (
        "cloudnest.com",
        "x",
        None,
        False,
    )
    client.post(f"{API}/watchlist", json={"domain": "bücher.de"})
    listing = client.get(f"{API}/watchlist")
    assert listing.status_code == 200
    assert listing.headers["cache-control"] == "no-store"
    assert [item["domain"] for item in listing.json()] == ["cloudnest.com", "xn--bcher-kva.de"]
    one = client.get(f"{API}/watchlist/CLOUDNEST.com")
    assert one.status_code == 200 and one.json() == entry
    assert client.delete(f"{API}/watchlist/cloudnest.com").status_code == 204
    assert [item["domain"] for item in client.get(f"{API}/watchlist").json()] == [
        "xn--bcher-kva.de"
    ]


def test_a_name_already_watched_is_a_conflict(client: TestClient) -> None:
    client.post(f"{API}/watchlist", json={"domain": "cloudnest.com", "notes": "first"})
    response = client.post(f"{API}/watchlist", json={"domain": "cloudnest.com", "notes": "2nd"})
    assert_error(response, 409, "conflict")
    assert "already on the watchlist" in response.json()["error"]["message"]
    assert client.get(f"{API}/watchlist/cloudnest.com").json()["notes"] == "first"


def test_invalid_input_is_a_422_and_writes_nothing(client: TestClient) -> None:
    for body in (
        {"domain": "no-tld"},
        {"domain": "bad_label!.com"},
        {"domain": ""},
        {"domain": 7},
        {"domain": "ok.com", "notes": "a" * 2001},
        {"domain": "ok.com", "notes": "nul\x00"},
        {"domain": "ok.com", "extra": True},
    ):
        response = client.post(f"{API}/watchlist", json=body)
        assert response.status_code == 422, (body, response.text)
    assert_error(client.post(f"{API}/watchlist", json={"domain": "no-tld"}), 422, "invalid_domain")
    assert client.get(f"{API}/watchlist").json() == []


def test_unknown_domains_are_404(client: TestClient) -> None:
    assert_error(client.get(f"{API}/watchlist/nothere.com"), 404, "not_found")
    assert_error(client.delete(f"{API}/watchlist/nothere.com"), 404, "not_found")
    # A name that is no domain cannot be watched either.
    assert_error(client.delete(f"{API}/watchlist/not a name"), 404, "not_found")


def test_writes_need_the_requested_by_header_and_the_token(authed_client: TestClient) -> None:
    plain = TestClient(authed_client.app, base_url=LOCAL_BASE_URL)
    assert plain.get(f"{API}/watchlist").status_code == 401
    headers = {"Authorization": "Bearer s3cret-t0ken"}
    refused = plain.delete(f"{API}/watchlist/x.com", headers=headers)
    assert_error(refused, 415)  # a bodiless write without X-Requested-By (ADR 0008)
    assert plain.get(f"{API}/watchlist", headers=headers).status_code == 200


def test_a_name_already_held_is_flagged(client: TestClient, engine: Engine) -> None:
    add_entry(engine, "held.com", date(2031, 1, 1), datetime.now(UTC))
    added = client.post(f"{API}/watchlist", json={"domain": "held.com"}).json()
    assert added["in_portfolio"] is True
    assert (added["drop_phase"], added["expected_drop_on"], added["rdap_statuses"]) == (
        None,
        None,
        [],
    )
    client.post(f"{API}/watchlist", json={"domain": "free.com"})
    listing = {
        item["domain"]: item["in_portfolio"] for item in client.get(f"{API}/watchlist").json()
    }
    assert listing == {"free.com": False, "held.com": True}
