"""/api/v1/portfolio with what registrars' exports say: the auto-renew flag and the
registrar's status imported, shown on each entry, and changed by PATCH; on SQLite and
PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API

pytestmark = pytest.mark.backends("sqlite", "postgresql")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "portfolio"


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def test_auto_renew_and_registrar_status_through_the_api(client: TestClient) -> None:
    done = client.post(
        f"{API}/portfolio/import?preset=godaddy&dry_run=true",
        content=(FIXTURES / "godaddy-us-dates.csv").read_bytes(),
        headers={"Content-Type": "text/csv"},
    )
    assert done.status_code == 200, done.text
    assert done.json()["columns"]["auto_renew"] == "Auto Renew"
    assert "Registrant Email" in done.json()["ignored_columns"]
    client.post(
        f"{API}/portfolio/import?preset=godaddy",
        content=(FIXTURES / "godaddy-us-dates.csv").read_bytes(),
        headers={"Content-Type": "text/csv"},
    )
    net = client.get(f"{API}/portfolio/example.net").json()
    assert (net["auto_renew"], net["registrar_status"], net["expired_at_registrar"]) == (
        False, "Expired", True,
    )  # fmt: skip
    patched = client.patch(f"{API}/portfolio/example.com", json={"auto_renew": False})
    assert patched.status_code == 200 and patched.json()["auto_renew"] is False
    left = client.patch(f"{API}/portfolio/example.com", json={"notes": "kept"}).json()
    assert left["auto_renew"] is False  # left out: kept
