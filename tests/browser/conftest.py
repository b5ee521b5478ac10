"""Browser tests of the dashboard (ADR 0023): Playwright (Python) driving Debian's Chromium at
/usr/bin/chromium (never a downloaded browser), against a real `dominus serve --with-worker`
subprocess on a free loopback port, as tests/api/test_serve_process.py does.

- `dashboard(**settings)` starts the server (offline providers, diagnostic jobs, quick polls)
  and returns it; `browser_page` is a fresh page (a new context: no cookies carried over).
- `check_page(page, name)` runs axe-core in the page (fails on serious or critical
  violations) and saves a screenshot as a test artefact, under $DOMINUS_TEST_ARTIFACTS or
  tests/browser/artifacts (git-ignored).

Chromium missing is a failure, not a skip: `.ci/run` installs Debian's `chromium` package.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from tests.api.conftest import API, ServeProcess, serve_env, serve_processes
from tests.polling import wait_until

__all__ = ["serve_processes"]  # the fixture, re-exported for these tests

CHROMIUM = Path(os.environ.get("DOMINUS_TEST_CHROMIUM", "/usr/bin/chromium"))
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
ARTIFACTS = Path(os.environ.get("DOMINUS_TEST_ARTIFACTS", Path(__file__).parent / "artifacts"))
FAILING_IMPACTS = ("serious", "critical")
TOKEN = "browser-test-token-0123456789"


# Package scope, not session: Playwright's sync API keeps an asyncio loop marked as running in
# the main thread while it is open, which breaks every later anyio test in the same session.
@pytest.fixture(scope="package")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="package")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    assert CHROMIUM.exists(), (
        f"no Chromium at {CHROMIUM}: install Debian's `chromium` package (.ci/run does)"
    )
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    launched = playwright_instance.chromium.launch(
        executable_path=str(CHROMIUM), args=["--no-sandbox"]
    )
    yield launched
    launched.close()


@pytest.fixture
def browser_page(browser: Browser) -> Iterator[Page]:
    """A fresh page; when the test is done, no Content-Security-Policy violation was reported
    on it (the pages' own scripts, styles and forms all fit the policy the server sends)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    yield page
    context.close()
    assert not violations, f"the page broke its Content-Security-Policy: {violations}"


@pytest.fixture
def dashboard(
    database_url: str, serve_processes: Callable[..., ServeProcess]
) -> Callable[..., ServeProcess]:
    def start(token: str | None = None, concurrency: int = 2, **settings: str) -> ServeProcess:
        values = {
            "DOMINUS_PROVIDERS": "offline",
            "JOB_QUEUE_POLL_INTERVAL_MS": "100",
            "WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS": "300",
            "JOB_RETRY_BASE_MS": "0",
        } | settings
        if token is not None:
            values["DOMINUS_API_TOKEN"] = token
        env = serve_env(database_url, **values)
        server = serve_processes(
            "--with-worker",
            "--diagnostic-jobs",
            "--concurrency",
            str(concurrency),
            env=env,
            token=token,
        )
        server.wait_ready()
        return server

    return start


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
