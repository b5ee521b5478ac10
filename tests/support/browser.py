"""Helpers of the browser tests (their fixtures are in tests/browser/conftest.py): a page's
accessibility check and screenshot, and jobs and a portfolio made through the API."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page

from tests.support.api import API
from tests.support.polling import wait_until

BROWSER_TESTS = Path(__file__).parents[1] / "browser"
AXE = BROWSER_TESTS / "vendor" / "axe.min.js"
ARTIFACTS = Path(os.environ.get("DOMINUS_TEST_ARTIFACTS", BROWSER_TESTS / "artifacts"))
FAILING_IMPACTS = ("serious", "critical")
TOKEN = "browser-test-token-0123456789"


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    # Evaluated, not added as a <script>: the pages' policy refuses inline scripts.
    page.evaluate(AXE.read_text())
    results: list[dict[str, Any]] = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return [violation for violation in results if violation.get("impact") in FAILING_IMPACTS]


def check_page(page: Page, name: str) -> None:
    """Screenshot (whole page) as an artefact, then no serious accessibility violation."""
    page.screenshot(path=str(artifact(f"{name}.png")), full_page=True)
    violations = axe_violations(page)
    summary = [
        {
            "id": violation["id"],
            "impact": violation["impact"],
            "help": violation["help"],
            "targets": [node["target"] for node in violation["nodes"]][:5],
        }
        for violation in violations
    ]
    assert not violations, f"{name}: accessibility violations:\n{json.dumps(summary, indent=2)}"


def api_job(http: httpx.Client, job_id: int) -> dict[str, Any]:
    response = http.get(f"{API}/jobs/{job_id}")
    assert response.status_code == 200, response.text
    job: dict[str, Any] = response.json()
    return job


def enqueue(http: httpx.Client, job_type: str, **fields: Any) -> dict[str, Any]:
    response = http.post(f"{API}/jobs", json={"type": job_type, **fields})
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    return job


def wait_for_status(http: httpx.Client, job_id: int, *statuses: str) -> dict[str, Any]:
    return wait_until(
        lambda: (job := api_job(http, job_id))["status"] in statuses and job,
        timeout=30,
        message=f"job {job_id} to be {' or '.join(statuses)}",
    )


# Names held for the Portfolio page: (domain, days until renewal, renewal cost).
HELD = [
    ("late.com", -1, 12.5),
    ("soon.com", 3, 12.5),
    ("later.com", 20, 7.25),
    ("far.com", 500, 9.0),
]


def seed_portfolio(http: httpx.Client) -> list[dict[str, Any]]:
    """Names held and watched (through the API), and the renewal check run once by the
    server's worker: the open alerts it raised."""
    today = datetime.now(UTC).date()
    for domain, days, cost in HELD:
        body = {
            "domain": domain,
            "renewal_date": str(today + timedelta(days)),
            "renewal_cost": cost,
        }
        response = http.post(f"{API}/portfolio", json=body)
        assert response.status_code == 201, response.text
    for domain in ("cloudnest.com", "zentrova.io"):
        response = http.post(f"{API}/watchlist", json={"domain": domain, "notes": "a bid"})
        assert response.status_code == 201, response.text
    check = enqueue(http, "RENEWAL_CHECK")
    wait_for_status(http, check["id"], "completed")
    alerts: list[dict[str, Any]] = http.get(f"{API}/alerts").json()
    assert alerts, "the renewal check raised no alert"
    return alerts
