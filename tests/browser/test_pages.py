"""Every page of the dashboard loads in Chromium, at desktop and phone width, with no serious
accessibility violation (axe-core), and is saved as a screenshot; another site cannot frame a
page."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.support.api import API
from tests.support.browser import check_page, enqueue, seed_portfolio, wait_for_status
from tests.support.polling import wait_until
from tests.support.serving import ServeProcess

pytestmark = pytest.mark.browser

SAMPLE_RUN = {
    "keywords": ["home gym", "meal prep", "solar panels"],
    "brandableNames": ["zentrova"],
    "closeoutDomains": [{"domain": "oldgardentools.com", "age": 12, "price": 1850}],
}
PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1200, "height": 900}


def test_every_page_loads_accessibly_at_desktop_and_phone_width(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard()
    with server.http() as http:
        done = enqueue(http, "diag.noop")
        failed = enqueue(http, "diag.fail", payload={"fail_times": 5}, max_attempts=1)
        run = http.post(f"{API}/runs", json=SAMPLE_RUN)
        assert run.status_code == 202, run.text
        run_id = run.json()["run_id"]
        wait_for_status(http, done["id"], "completed")
        wait_for_status(http, failed["id"], "failed")
        wait_until(
            lambda: http.get(f"{API}/runs/{run_id}").json()["status"] == "completed",
            timeout=60,
            message="the run to complete",
        )
        [entry] = http.get(f"{API}/dlq").json()
        alerts = seed_portfolio(http)
    pages = {
        "overview": ("/", "Overview"),
        "jobs": ("/jobs", "Jobs"),
        "job": (f"/jobs/{failed['id']}", f"Job {failed['id']}"),
        "dead-letters": ("/dead-letters", "Dead letters"),
        "history": ("/history", "History"),
        "history-7d": ("/history?window=7d", "History"),
        "dead-letter": (f"/dead-letters/{entry['id']}", f"Dead letter {entry['id']}"),
        "purge": ("/dead-letters-purge", "Purge dead letters"),
        "workers": ("/workers", "Workers"),
        "schedules": ("/schedules", "Schedules"),
        "runs": ("/runs", "Runs"),
        "run": (f"/runs/{run_id}", f"Run {run_id}"),
        "appraise": ("/appraise?domain=homegym.com", "Appraise a domain"),
        "portfolio": ("/portfolio", "Portfolio"),
        "portfolio-entry": ("/portfolio/entries/soon.com", "soon.com"),
        "portfolio-import": ("/portfolio/import", "Import a CSV file"),
        "outcomes": ("/outcomes", "Outcomes"),
        "backtest": ("/backtest", "Backtest"),
        "login": ("/login", "Log in"),
    }
    page = browser_page
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    for width_name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        for name, (path, heading) in pages.items():
            response = page.goto(server.base_url + path)
            assert response is not None and response.status == 200, (path, response)
            assert page.locator("h1").first.inner_text().startswith(heading), path
            # Landmarks every page has: the navigation and the main content.
            assert page.locator("nav[aria-label=Main]").count() == 1
            assert page.locator("main#main").count() == 1
            if width_name == "phone":
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{path} is wider than a phone screen by {overflow} px"
            check_page(page, f"{name}-{width_name}")
    assert not errors, errors
    # What the pages say matches the database (read through the API).
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(f"{server.base_url}/runs/{run_id}")
    assert page.locator("#candidates tbody tr").count() > 0
    page.goto(f"{server.base_url}/appraise?domain=homegym.com")
    assert "homegym.com" in page.locator("#result-heading").inner_text()
    page.goto(f"{server.base_url}/portfolio")
    for alert in alerts:
        expect(page.locator(f"tr[data-alert='{alert['id']}']")).to_contain_text(alert["domain"])
    expect(page.locator("tr[data-watched='cloudnest.com']")).to_contain_text("a bid")
    assert server.terminate_and_wait(20) == 0, server.output()


def test_pages_are_readable_without_javascript(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    """With JavaScript off the pages still show their content, and a plain form post (the
    cancel button) works through the POST/redirect/GET round trip."""
    server = dashboard()
    with server.http() as http:
        job = enqueue(http, "diag.sleep", payload={"seconds": 120})
        wait_for_status(http, job["id"], "running")
    context = browser_page.context.browser
    assert context is not None
    no_script = context.new_context(java_script_enabled=False)
    page = no_script.new_page()
    page.goto(f"{server.base_url}/jobs/{job['id']}")
    assert "running" in page.locator("#job-status").inner_text()
    page.get_by_role("button", name=f"Cancel job {job['id']}").click()
    expect(page).to_have_url(re.compile(rf"/jobs/{job['id']}\?notice="))
    with server.http() as http:
        wait_for_status(http, job["id"], "cancelled")
    page.goto(f"{server.base_url}/jobs/{job['id']}")
    assert "cancelled" in page.locator("#job-status").inner_text()
    no_script.close()


@contextmanager
def another_site(framed: str) -> Iterator[str]:
    """A site of another origin (a loopback port of its own) whose page frames `framed`, and,
    as a control, a page of its own with a button."""
    page = (
        "<!doctype html><html lang=en><title>another site</title>"
        f"<iframe id=target src='{framed}'></iframe><iframe id=control src='/own'></iframe>"
    ).encode()
    own = b"<!doctype html><html lang=en><title>own</title><button>Own button</button>"

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = own if self.path == "/own" else page
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_another_site_cannot_frame_a_page(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    """A page of another origin that frames Purge (to trick a click on it) gets an empty
    frame: the browser refuses to render it there (`frame-ancestors 'none'`); a page of that
    site's own renders in the frame beside it."""
    server = dashboard()
    # A context of its own: the refusal is reported as a policy violation, which the
    # `browser_page` fixture counts against the pages.
    browser = browser_page.context.browser
    assert browser is not None
    context = browser.new_context()
    page = context.new_page()
    with another_site(f"{server.base_url}/dead-letters-purge") as attacker:
        page.goto(attacker, wait_until="load")  # `load` waits for the frames too
        expect(
            page.frame_locator("#control").get_by_role("button", name="Own button")
        ).to_be_visible()
        assert page.frame_locator("#target").get_by_role("button", name="Purge").count() == 0
    # The page itself, opened directly, still has its button.
    page.goto(f"{server.base_url}/dead-letters-purge")
    expect(page.get_by_role("button", name="Purge")).to_be_visible()
    context.close()
