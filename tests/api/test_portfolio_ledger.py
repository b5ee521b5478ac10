"""POST /api/v1/portfolio/{domain}/sold and /drop on SQLite and PostgreSQL: the ledger's
actions as `dominus portfolio sold|drop` (the outcome, BACKTEST_BUILD enqueued for a sale, a
date after today refused), their errors, the token they need and their OpenAPI entries."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API, REQUESTED_BY_HEADER, TOKEN, assert_error, runtime_of

pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def _add(client: TestClient, domain: str, **fields: object) -> None:
    body = {"domain": domain, "renewal_date": "2099-01-02", **fields}
    assert client.post(f"{API}/portfolio", json=body).status_code == 201


def test_sold_closes_the_entry_and_enqueues_the_backtest_build(client: TestClient) -> None:
    _add(client, "example.com", acquisition_cost=100, renewals_paid=20)
    sold = client.post(
        f"{API}/portfolio/example.com/sold",
        json={"price": 1500, "fees": 225, "date": "2024-05-01", "venue": "Example Market"},
    )
    assert sold.status_code == 200, sold.text
    sale = sold.json()
    assert (sale["realised_profit"], sale["date"], sale["venue"]) == (
        1155.0, "2024-05-01", "Example Market",
    )  # fmt: skip
    job = runtime_of(client).store.get_job(sale["build_job_id"])
    assert (job.job_type, sale["build_created"]) == ("BACKTEST_BUILD", True)
    entry = client.get(f"{API}/portfolio/example.com").json()
    assert entry["status"] == "sold" and entry["history"][-1]["kind"] == "sold"
    (outcome,) = client.get(f"{API}/outcomes").json()
    assert (outcome["domain"], outcome["price"], outcome["cost_basis"]) == (
        "example.com", 1500, 120,
    )  # fmt: skip
    assert_error(
        client.post(f"{API}/portfolio/example.com/sold", json={"price": 1}), 409, "conflict"
    )
    assert_error(
        client.post(f"{API}/portfolio/missing.com/sold", json={"price": 1}), 404, "not_found"
    )
    assert_error(
        client.post(f"{API}/portfolio/example.net/sold", json={"price": -1}),
        422,
        "invalid_request",
    )


def test_drop_with_or_without_a_body(client: TestClient) -> None:
    _add(client, "example.com", acquisition_cost=8)
    _add(client, "example.net")
    dropped = client.post(f"{API}/portfolio/example.com/drop", json={"date": "2024-06-01"})
    assert dropped.status_code == 200, dropped.text
    assert (dropped.json()["sunk_cost"], dropped.json()["date"]) == (8.0, "2024-06-01")
    bare = client.post(f"{API}/portfolio/example.net/drop", headers={REQUESTED_BY_HEADER: "t"})
    assert bare.status_code == 200, bare.text
    assert bare.json()["date"] == runtime_of(client).clock().date().isoformat()
    assert_error(client.post(f"{API}/portfolio/example.net/drop", json={}), 409, "conflict")


def test_a_day_after_today_is_refused_as_outcomes_refuse_it(client: TestClient) -> None:
    _add(client, "example.com")
    tomorrow = (runtime_of(client).clock().date() + timedelta(days=1)).isoformat()
    messages = {
        assert_error(client.post(path, json=body), 422, code)["message"]
        for path, body, code in (
            (f"{API}/portfolio/example.com/sold", {"price": 10, "date": tomorrow},
             "invalid_outcome"),
            (f"{API}/portfolio/example.com/drop", {"date": tomorrow}, "invalid_outcome"),
            (f"{API}/outcomes", {"domain": "example.com", "price": 10, "date": tomorrow},
             "invalid_outcome"),
        )
    }  # fmt: skip
    (message,) = messages  # one rule, one message
    assert message.startswith(f"date {tomorrow} is after today")
    assert client.get(f"{API}/portfolio/example.com").json()["status"] == "active"
    assert client.get(f"{API}/outcomes").json() == []


def test_the_ledger_actions_need_the_token(make_client: Callable[..., TestClient]) -> None:
    authed = make_client(DOMINUS_API_TOKEN=TOKEN, DOMINUS_PROVIDERS="sample")
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    body = {"domain": "example.com", "renewal_date": "2099-01-02"}
    assert authed.post(f"{API}/portfolio", json=body, headers=bearer).status_code == 201
    for action, payload in (("sold", {"price": 10}), ("drop", {})):
        path = f"{API}/portfolio/example.com/{action}"
        assert_error(authed.post(path, json=payload), 401)
    entry = authed.get(f"{API}/portfolio/example.com", headers=bearer).json()
    assert entry["status"] == "active"
    done = authed.post(f"{API}/portfolio/example.com/drop", json={}, headers=bearer)
    assert done.status_code == 200, done.text


def test_the_openapi_document_describes_the_ledger_actions(client: TestClient) -> None:
    paths = client.get(f"{API}/openapi.json").json()["paths"]
    sold = paths[f"{API}/portfolio/{{domain}}/sold"]["post"]
    drop = paths[f"{API}/portfolio/{{domain}}/drop"]["post"]
    assert sold["requestBody"]["required"] is True
    assert "BACKTEST_BUILD" in sold["description"]
    for operation in (sold, drop):
        assert {"200", "404", "409", "422"} <= set(operation["responses"])
