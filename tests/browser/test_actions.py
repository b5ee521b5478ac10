"""Acting from the dashboard in Chromium: cancel a running job and see it cancelled, requeue a
dead letter, start a pipeline run from the form and watch its funnel fill in without a
reload, acknowledge a renewal alert and watch and unwatch a domain on the Portfolio page."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.support.api import API
from tests.support.browser import api_job, check_page, enqueue, seed_portfolio, wait_for_status
from tests.support.polling import wait_until
from tests.support.serving import ServeProcess

pytestmark = pytest.mark.browser


def test_cancel_a_running_job_from_its_page(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard()
    page = browser_page
    with server.http() as http:
        job = enqueue(http, "diag.sleep", payload={"seconds": 120})
        wait_for_status(http, job["id"], "running")
        page.goto(f"{server.base_url}/jobs/{job['id']}")
        status = page.locator("#job-status")
        expect(status).to_contain_text("running")
        page.get_by_role("button", name=f"Cancel job {job['id']}").click()
        # The worker stops the job; the page's live part shows it, the database agrees.
        expect(status).to_contain_text("cancelled", timeout=30_000)
        assert api_job(http, job["id"])["status"] == "cancelled"
        expect(page.get_by_role("button", name=f"Retry job {job['id']}")).to_be_visible()
        check_page(page, "action-job-cancelled")


def test_requeue_a_dead_letter_from_the_list(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard()
    page = browser_page
    with server.http() as http:
        # Fails its only attempt (dead-lettered), succeeds once requeued.
        job = enqueue(http, "diag.fail", payload={"fail_times": 1}, max_attempts=1)
        wait_for_status(http, job["id"], "failed")
        [entry] = wait_until(lambda: http.get(f"{API}/dlq").json(), message="a DLQ entry")
        page.goto(f"{server.base_url}/dead-letters")
        row = page.locator("tr", has=page.get_by_role("link", name=str(entry["id"]), exact=True))
        expect(row).to_contain_text("diag.fail")
        page.get_by_label(f"select entry {entry['id']}").check()
        page.get_by_role("button", name="Requeue selected").click()
        expect(page.get_by_role("status")).to_contain_text("requeued")
        wait_for_status(http, job["id"], "completed")
        requeued = http.get(f"{API}/dlq/{entry['id']}").json()
        assert requeued["requeued_at"] is not None
        # Gone from the list of entries waiting for a decision.
        page.goto(f"{server.base_url}/dead-letters")
        expect(page.locator("main")).to_contain_text("The dead-letter queue is empty.")


def test_start_a_run_from_the_form_and_watch_the_funnel_live(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    # One worker slot, held by a sleeping job: the run waits, pending, while the page opens
    # its stream; then the slot is freed and the funnel must fill in on the open page.
    server = dashboard(concurrency=1)
    page = browser_page
    with server.http() as http:
        blocker = enqueue(http, "diag.sleep", payload={"seconds": 120})
        wait_for_status(http, blocker["id"], "running")
        page.goto(f"{server.base_url}/runs")
        page.get_by_label("Keywords").fill("home gym\nmeal prep\nsolar panels")
        page.get_by_label("Brandable names").fill("zentrova")
        page.get_by_label("Closeout list").fill("oldgardentools.com,12,300,90,1850")
        page.get_by_role("button", name="Start run").click()
        expect(page).to_have_url(re.compile(r"/runs/\d+\?notice=run-started$"))
        run_id = int(page.url.split("/runs/")[1].split("?")[0])
        funnel = page.locator("#run-live")
        expect(funnel).to_contain_text("pending")
        expect(page.locator("#results")).to_contain_text("appear when the run has finished")
        # A mark on this document: a reload or a navigation would drop it.
        page.evaluate("window.__sameDocument = true")
        seen: list[str] = []

        def record(text: str) -> None:
            seen.append(text)

        page.expose_function("recordFunnel", record)
        page.evaluate(
            """() => new MutationObserver(() => window.recordFunnel(
                   document.querySelector('#run-live').innerText))
                 .observe(document.querySelector('#run-live'),
                          {childList: true, subtree: true, characterData: true})"""
        )
        assert http.post(f"{API}/jobs/{blocker['id']}/cancel").status_code == 200
        expect(page.locator("#run-live tr[data-stage=trademark]")).to_contain_text(
            "completed", timeout=60_000
        )
        expect(page.locator("#run-live")).to_contain_text("completed")
        # The results were fetched when the stream ended, into the same document.
        expect(page.locator("#candidates")).to_be_visible(timeout=30_000)
        assert page.evaluate("window.__sameDocument") is True
        assert seen, "the funnel never changed on the open page"
        run = http.get(f"{API}/runs/{run_id}").json()
        assert run["status"] == "completed"
        # The funnel's figures are the run's: in and out of the generate stage.
        generate = page.locator("#run-live tr[data-stage=generate] td.num")
        assert generate.nth(0).inner_text() == str(run["stages"]["generate"]["total"])
        assert generate.nth(1).inner_text() == str(run["stages"]["generate"]["passed"])
        check_page(page, "action-run-finished")
        # The CSV download is the API's export.
        with page.expect_download() as download:
            page.get_by_role("link", name="Download CSV").click()
        assert download.value.suggested_filename == f"run-{run_id}-candidates.csv"


def test_acknowledge_a_renewal_alert_and_watch_a_domain_from_the_portfolio_page(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard()
    page = browser_page
    with server.http() as http:
        alerts = seed_portfolio(http)
        alert = next(alert for alert in alerts if alert["domain"] == "soon.com")
        page.goto(f"{server.base_url}/portfolio")
        row = page.locator(f"tr[data-alert='{alert['id']}']")
        expect(row).to_contain_text("critical")
        page.get_by_role("button", name="Acknowledge the critical alert for soon.com").click()
        expect(page.get_by_role("status")).to_contain_text("The alert was acknowledged.")
        expect(page).to_have_url(re.compile(r"/portfolio\?notice=alert-acknowledged$"))
        expect(row).to_have_count(0)  # no longer open
        acknowledged = [
            a for a in http.get(f"{API}/alerts?all=true").json() if a["id"] == alert["id"]
        ]
        assert acknowledged[0]["state"] == "acknowledged"
        assert alert["id"] not in [a["id"] for a in http.get(f"{API}/alerts").json()]

        page.get_by_label("Domain", exact=True).fill("brightmarket.com")
        page.get_by_label("Notes (optional)").fill("watch for a drop")
        page.get_by_role("button", name="Watch", exact=True).click()
        expect(page.get_by_role("status")).to_contain_text("on the watchlist")
        expect(page.locator("tr[data-watched='brightmarket.com']")).to_contain_text(
            "watch for a drop"
        )
        watched = [entry["domain"] for entry in http.get(f"{API}/watchlist").json()]
        assert "brightmarket.com" in watched
        check_page(page, "action-portfolio-acknowledged")
        page.get_by_role("button", name="Remove brightmarket.com from the watchlist").click()
        expect(page.get_by_role("status")).to_contain_text("no longer watched")
        expect(page.locator("tr[data-watched='brightmarket.com']")).to_have_count(0)
        watched = [entry["domain"] for entry in http.get(f"{API}/watchlist").json()]
        assert "brightmarket.com" not in watched
