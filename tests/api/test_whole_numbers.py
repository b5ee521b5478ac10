"""Ids, cursors, limits and offsets in a URL are whole numbers written in digits: pydantic's lax
mode would read "600.0" or "6e2" as 600, and the API answered such a request as if it were valid."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API, assert_error

pytestmark = pytest.mark.backends("sqlite")


@pytest.mark.parametrize("written", ["600.0", "6e2", "600.", " 600", "0x258", "600_0"])
@pytest.mark.parametrize("path", [f"{API}/runs?cursor=", f"{API}/jobs?limit=", f"{API}/jobs/"])
def test_a_number_not_written_in_digits_is_refused(
    client: TestClient, path: str, written: str
) -> None:
    assert_error(client.get(path + written), 422, "invalid_request")


@pytest.mark.parametrize("path", [f"{API}/runs?cursor=600", f"{API}/jobs?limit=5"])
def test_digits_are_taken(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 200


def test_an_id_in_digits_reaches_the_route(client: TestClient) -> None:
    assert_error(client.get(f"{API}/jobs/600"), 404, "not_found")
