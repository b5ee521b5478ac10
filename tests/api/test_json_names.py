"""One JSON naming convention: every name the API's schema declares is snake_case; the answers
that had camelCase names (a created run, an enqueued rescore, an import report, a weight set)
have snake_case ones; a run's request takes its list names in either spelling."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.backtest.store import BacktestStore
from tests.support.api import API, assert_error, runtime_of

SNAKE_CASE = re.compile(r"^_?[a-z][a-z0-9]*(_[a-z0-9]+)*$")


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def property_names(schema: Any) -> Iterator[str]:
    """Every property name declared anywhere in a JSON Schema document."""
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            yield from properties
        for value in schema.values():
            yield from property_names(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from property_names(item)


def test_every_name_in_the_schema_is_snake_case(client: TestClient) -> None:
    schemas = client.get(f"{API}/openapi.json").json()["components"]["schemas"]
    names = set(property_names(schemas))
    assert {"run_id", "job_id", "dry_run", "_links", "brandable_names"} <= names
    assert sorted(name for name in names if not SNAKE_CASE.match(name)) == []


def test_a_created_run_answers_with_snake_case_names(client: TestClient) -> None:
    created = client.post(f"{API}/runs", json={"keywords": ["home gym"]}).json()
    assert set(created) == {"run_id", "job_id", "status", "_links"}


@pytest.mark.parametrize(
    "lists",
    [
        {"brandable_names": ["zentrova"], "closeout_domains": ["oldgardentools.com"]},
        {"brandableNames": ["zentrova"], "closeoutDomains": ["oldgardentools.com"]},
    ],
    ids=["snake_case", "camelCase"],
)
def test_a_run_takes_its_lists_in_either_spelling(
    client: TestClient, lists: dict[str, list[str]]
) -> None:
    response = client.post(f"{API}/runs", json=lists)
    assert response.status_code == 202, response.text
    run = client.get(f"{API}/runs/{response.json()['run_id']}").json()
    assert run["input"]["brandable"] == ["zentrova"]
    assert [item["domain"] for item in run["input"]["closeout"]] == ["oldgardentools.com"]


def test_both_spellings_of_a_list_are_refused(client: TestClient) -> None:
    body = {"brandable_names": ["zentrova"], "brandableNames": ["kindrel"]}
    assert_error(client.post(f"{API}/runs", json=body), 422, "invalid_request")


def test_an_enqueued_rescore_answers_with_its_job_id(client: TestClient) -> None:
    answer = client.post(f"{API}/portfolio/rescore", json={}).json()
    assert set(answer) == {"job_id", "created"}


def test_a_weight_set_has_snake_case_times(client: TestClient) -> None:
    weights = {"intrinsic": 0.4, "commercial": 0.3, "market": 0.2, "expiry": 0.1}
    BacktestStore(runtime_of(client).engine).weights.add(
        "manual", weights, "manual", datetime.now(UTC)
    )
    active = client.get(f"{API}/weights").json()["active"]
    assert {"created_at", "activated_at"} <= set(active)
    assert not {"createdAt", "activatedAt"} & set(active)
