"""Input limits of the API on SQLite and PostgreSQL: JSON nested too deep is a 422 before
anything parses it (it was a plain-text 500, or a vague 400 once Python's parser overflowed)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import API, TOKEN, assert_error, enqueue, runtime_of

JSON = {"content-type": "application/json"}


def deep_arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [64, 500, 1_000, 100_000])
@pytest.mark.parametrize("shape", [deep_arrays, deep_objects], ids=["arrays", "objects"])
def test_a_deeply_nested_job_payload_is_a_422(
    client: TestClient, backend: str, depth: int, shape: Callable[[int], str]
) -> None:
    # With the body's own object around it, a payload 64 deep is 65 deep: one too many.
    body = '{"type": "diag.noop", "payload": {"a": ' + shape(depth - 1) + "}}"
    response = client.post(f"{API}/jobs", content=body, headers=JSON)
    error = assert_error(response, 422, "invalid_request")
    assert error["message"] == "the request body is nested more than 64 levels deep"
    assert runtime_of(client).store.list_jobs() == []


def test_a_deeply_nested_run_body_is_a_422(client: TestClient, backend: str) -> None:
    body = '{"keywords": ["a"], "closeoutDomains": ' + deep_arrays(100_000) + "}"
    response = client.post(f"{API}/runs", content=body, headers=JSON)
    assert_error(response, 422, "invalid_request")


def test_nesting_within_the_limit_reaches_validation(client: TestClient, backend: str) -> None:
    body = '{"type": "diag.noop", "payload": {"a": ' + deep_arrays(60) + "}}"
    response = client.post(f"{API}/jobs", content=body, headers=JSON)
    assert_error(response, 422, "invalid_payload")  # diag.noop takes no field `a`
    brackets_in_a_string = {"message": "[{" * 5_000}
    assert enqueue(client, "diag.fail", payload=brackets_in_a_string)["payload"] == {
        "fail_times": 1,
        "message": "[{" * 5_000,
    }


def test_the_token_is_checked_before_the_body_is_read(
    make_client: Callable[..., TestClient], backend: str
) -> None:
    client = make_client(DOMINUS_API_TOKEN=TOKEN)
    body = '{"type": "diag.noop", "payload": ' + deep_arrays(1_000) + "}"
    assert_error(client.post(f"{API}/jobs", content=body, headers=JSON), 401, "unauthorized")
    authed = JSON | {"Authorization": f"Bearer {TOKEN}"}
    assert_error(client.post(f"{API}/jobs", content=body, headers=authed), 422)
