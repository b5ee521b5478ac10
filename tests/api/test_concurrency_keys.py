"""`POST /api/v1/jobs` with `concurrency_key` and `concurrency_limit` (ADR 0052): stored and shown
in the job's JSON; CONCURRENCY_LIMITS gives the limit the body leaves out; a bad key or limit is a
422 with nothing written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.runtime import Runtime
from tests.support.api import API, assert_error

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_a_job_carries_its_key_and_limit(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(CONCURRENCY_LIMITS="mail:=3")
    given = client.post(
        f"{API}/jobs",
        json={"type": "diag.noop", "concurrency_key": "backup", "concurrency_limit": 2},
    )
    assert given.status_code == 202, given.text
    assert (given.json()["concurrency_key"], given.json()["concurrency_limit"]) == ("backup", 2)
    from_setting = client.post(
        f"{API}/jobs", json={"type": "diag.noop", "concurrency_key": "mail:x"}
    )
    assert from_setting.json()["concurrency_limit"] == 3
    plain = client.get(
        f"{API}/jobs/{client.post(f'{API}/jobs', json={'type': 'diag.noop'}).json()['id']}"
    )
    assert (plain.json()["concurrency_key"], plain.json()["concurrency_limit"]) == (None, None)


@pytest.mark.parametrize(
    "fields",
    [
        {"concurrency_key": "k", "concurrency_limit": 0},
        {"concurrency_key": "k", "concurrency_limit": -1},
        {"concurrency_key": "k", "concurrency_limit": 1.5},
        {"concurrency_key": "k", "concurrency_limit": "2"},
        {"concurrency_key": "a b"},
        {"concurrency_key": ""},
        {"concurrency_limit": 2},
    ],
)
def test_a_bad_key_or_limit_is_a_422_and_nothing_is_written(
    client: TestClient, runtime: Runtime, fields: dict[str, Any]
) -> None:
    response = client.post(f"{API}/jobs", json={"type": "diag.noop", **fields})
    assert_error(response, 422)
    assert runtime.store.list_jobs() == []
