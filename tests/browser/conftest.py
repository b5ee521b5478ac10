"""Browser tests of the dashboard (ADR 0023): Playwright (Python) driving Debian's Chromium at
/usr/bin/chromium (never a downloaded browser), against a real `dominus serve --with-worker`
subprocess on a free loopback port, as tests/api/test_serve_process.py does.

- `dashboard(**settings)` starts the server (sample providers, diagnostic jobs, quick polls)
  and returns it; `browser_page` is a fresh page (a new context: no cookies carried over).
- `check_page(page, name)` (tests/support/browser.py, with the other helpers) runs axe-core
  in the page (fails on serious or critical violations) and saves a screenshot as a test
  artefact, under $DOMINUS_TEST_ARTIFACTS or tests/browser/artifacts (git-ignored).

Chromium missing is a failure, not a skip: `.ci/run` installs Debian's `chromium` package.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from tests.support.serving import ServeProcess, serve_env

CHROMIUM = Path(os.environ.get("DOMINUS_TEST_CHROMIUM", "/usr/bin/chromium"))


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
            "DOMINUS_PROVIDERS": "sample",
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
