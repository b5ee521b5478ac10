"""Bulk actions from the Jobs page in Chromium (ADR 0054): the header box ticks every row,
the page's own boxes pick some, and a bulk button asks first with the count ("Cancel 2
jobs?") before anything changes; the confirmation acts on exactly those jobs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import api_job, check_page, enqueue
from tests.support.serving import ServeProcess

pytestmark = pytest.mark.browser
LATER = "2999-01-01T00:00:00Z"  # scheduled far ahead: no worker takes them meanwhile


def test_tick_jobs_confirm_the_count_then_cancel_them(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard()
    page = browser_page
    with server.http() as http:
        jobs = [enqueue(http, "diag.noop", run_at=LATER)["id"] for _ in range(3)]
        page.goto(f"{server.base_url}/jobs?status=scheduled")
        boxes = page.locator('input[name="job"]')
        expect(boxes).to_have_count(3)
        # The header box ticks (and unticks) every row, without a round trip.
        page.get_by_label("select every job on this page").check()
        for index in range(3):
            expect(boxes.nth(index)).to_be_checked()
        page.get_by_label("select every job on this page").uncheck()
        page.get_by_label(f"select job {jobs[0]}").check()
        page.get_by_label(f"select job {jobs[2]}").check()
        page.get_by_role("button", name="Cancel selected").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Cancel 2 jobs?")
        check_page(page, "bulk-confirm")
        assert all(api_job(http, job_id)["status"] == "pending" for job_id in jobs)  # asked only
        page.get_by_role("button", name="Cancel 2 jobs").click()
        expect(page.get_by_role("status")).to_contain_text("2 jobs cancelled")
        statuses = [api_job(http, job_id)["status"] for job_id in jobs]
        assert statuses == ["cancelled", "pending", "cancelled"]
        expect(page).to_have_url(
            f"{server.base_url}/jobs?status=scheduled&notice=bulk&action=cancel&done=2&skipped=0"
        )
