"""/api/v1/portfolio on SQLite and PostgreSQL: CRUD with the error shape, CSV import (text/csv
and multipart, dry run, refused rows), and POST /portfolio/rescore enqueuing PORTFOLIO_RESCORE
(202, deduplicated per scope, run by a worker)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dominus.jobs.clock import utc_now
from dominus.portfolio.model import EntryFields, ScoreUpdate
from dominus.portfolio.service import PortfolioService
from tests.support.api import API, assert_error, finish_jobs, runtime_of

pytestmark = pytest.mark.backends("sqlite", "postgresql")


FIXTURES = Path(__file__).parents[1] / "fixtures" / "portfolio"


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def test_crud(client: TestClient) -> None:
    created = client.post(
        f"{API}/portfolio",
        json={"domain": "Example.com", "renewal_date": "2031-01-02", "acquisition_cost": 50},
    )
    assert created.status_code == 201, created.text
    entry = created.json()
    assert (entry["domain"], entry["renewal_cost"], entry["verdict"]) == (
        "example.com", 18.48, "reprice",
    )  # fmt: skip
    assert entry["renewal_price_source"].startswith("highest known retail price: Namecheap renewal")
    assert_error(
        client.post(
            f"{API}/portfolio", json={"domain": "example.com", "renewal_date": "2031-01-02"}
        ),
        409,
        "conflict",
    )
    assert_error(
        client.post(f"{API}/portfolio", json={"domain": "example.org", "renewal_date": "2031-01-02",
                                              "renewal_cost": -1}),
        422,
        "invalid_request",
    )  # fmt: skip
    patched = client.patch(f"{API}/portfolio/example.com", json={"list_price": 900})
    assert patched.status_code == 200 and patched.json()["list_price"] == 900
    assert patched.json()["acquisition_cost"] == 50  # left out: kept
    shown = client.get(f"{API}/portfolio/example.com").json()
    assert shown["history"][0]["to"] == "reprice"
    assert [e["domain"] for e in client.get(f"{API}/portfolio").json()] == ["example.com"]
    assert client.delete(f"{API}/portfolio/example.com").status_code == 204
    assert_error(client.get(f"{API}/portfolio/example.com"), 404, "not_found")
    assert_error(client.get(f"{API}/portfolio/a..b"), 422, "invalid_domain")
    assert_error(client.get(f"{API}/portfolio/rescore"), 405, "method_not_allowed")


def test_import_text_csv_and_multipart(client: TestClient) -> None:
    text = (FIXTURES / "godaddy.csv").read_bytes()
    dry = client.post(
        f"{API}/portfolio/import?preset=godaddy&dry_run=true",
        content=text,
        headers={"Content-Type": "text/csv"},
    )
    assert dry.status_code == 200, dry.text
    assert dry.json()["dry_run"] and sorted(dry.json()["added"]) == ["example.com", "example.net"]
    assert client.get(f"{API}/portfolio").json() == []
    done = client.post(
        f"{API}/portfolio/import?preset=godaddy",
        files={"file": ("godaddy.csv", text, "text/csv")},
    )
    assert done.status_code == 200, done.text
    assert len(client.get(f"{API}/portfolio").json()) == 2
    refused = client.post(
        f"{API}/portfolio/import",
        content=b"domain,expiry date\nexample.org,03/04/2031\n",
        headers={"Content-Type": "text/csv"},
    )
    error = assert_error(refused, 422, "invalid_import")
    assert "line 2, column 'expiry date'" in error["message"]
    assert_error(
        client.post(f"{API}/portfolio/import", json={"a": 1}), 415, "unsupported_media_type"
    )


def test_import_refuses_what_the_entry_body_refuses(client: TestClient) -> None:
    """A NUL or an over-long value is a 422 naming the line and column, on both backends (it
    was a database error, 503, on PostgreSQL), and nothing is written."""
    for header, cell in (("notes", "a\x00b"), ("registrar", "r" * 201)):
        refused = client.post(
            f"{API}/portfolio/import",
            content=f'domain,expiry date,{header}\nexample.org,2031-01-02,"{cell}"\n'.encode(),
            headers={"Content-Type": "text/csv"},
        )
        error = assert_error(refused, 422, "invalid_import")
        assert f"line 2, column '{header}'" in error["message"]
        body = {"domain": "example.org", "renewal_date": "2031-01-02", header: cell}
        assert_error(client.post(f"{API}/portfolio", json=body), 422, "invalid_request")
    assert client.get(f"{API}/portfolio").json() == []


def test_rescore_enqueues_and_a_worker_runs_it(client: TestClient) -> None:
    client.post(f"{API}/portfolio", json={"domain": "zentrova.com", "renewal_date": "2031-01-02"})
    first = client.post(f"{API}/portfolio/rescore", json={})
    assert first.status_code == 202, first.text
    assert first.headers["Location"] == f"/api/v1/jobs/{first.json()['job_id']}"
    again = client.post(f"{API}/portfolio/rescore", json={})
    assert again.status_code == 200 and again.json()["job_id"] == first.json()["job_id"]
    assert_error(
        client.post(f"{API}/portfolio/rescore", json={"domain": "missing.com"}), 404, "not_found"
    )
    finish_jobs(runtime_of(client))
    job = client.get(f"{API}/jobs/{first.json()['job_id']}").json()
    assert job["status"] == "completed", job
    assert job["result"]["rescored"] == 1 and job["result"]["errors"] == []
    entry = client.get(f"{API}/portfolio/zentrova.com").json()
    assert entry["current_score"] is not None and entry["suggested_list_price"] is not None


def test_a_change_that_keeps_the_verdict_refreshes_its_reason(client: TestClient) -> None:
    """Judged ten days ago 4 days before its renewal; a PATCH now judges it again (the same
    verdict, drop): the entry read back states today's figures, its history only the changes."""
    runtime = runtime_of(client)
    earlier = utc_now() - timedelta(days=10)
    service = PortfolioService(runtime.engine, runtime.settings)
    renewal = earlier.date() + timedelta(days=4)
    service.add("example.com", EntryFields(renewal_date=renewal), earlier)
    service.record_score("example.com", ScoreUpdate(50.0, 100.0, 0.8, 150.0, {}), earlier)
    patched = client.patch(f"{API}/portfolio/example.com", json={"notes": "judged again"})
    assert patched.status_code == 200, patched.text
    for entry in (patched.json(), client.get(f"{API}/portfolio/example.com").json()):
        assert entry["verdict"] == "drop"
        assert "past due" in entry["verdict_reason"]
        assert "renewal in 4 days" not in entry["verdict_reason"]
    history = client.get(f"{API}/portfolio/example.com").json()["history"]
    assert [event["to"] for event in history] == ["reprice", "drop"]
    (listed,) = client.get(f"{API}/portfolio").json()
    assert "past due" in listed["verdict_reason"]


def test_an_entry_matching_a_mark_carries_it(client: TestClient) -> None:
    for name in ("netflix-deals.com", "zentrova.com"):
        client.post(f"{API}/portfolio", json={"domain": name, "renewal_date": "2031-01-02"})
    client.post(f"{API}/portfolio/rescore", json={})
    finish_jobs(runtime_of(client))
    flagged = client.get(f"{API}/portfolio/netflix-deals.com").json()
    assert flagged["trademark"] == {"mark": "netflix", "rule": "exact"}
    assert flagged["verdict_reason"].startswith("UDRP risk: matches mark 'netflix'")
    listed = {
        entry["domain"]: entry["trademark"] for entry in client.get(f"{API}/portfolio").json()
    }
    assert listed == {
        "netflix-deals.com": {"mark": "netflix", "rule": "exact"},
        "zentrova.com": None,
    }
