"""With DOMINUS_API_TOKEN set: pages send the browser to the login form; logging in sets a
signed, HttpOnly, SameSite=Strict cookie (not the token); a POST without the page's CSRF
token is refused; the cookie does not open /api/v1, the bearer token still does."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.api import API
from tests.support.browser import TOKEN, check_page, enqueue, wait_for_status
from tests.support.serving import ServeProcess

pytestmark = pytest.mark.browser

POST_FROM_PAGE = """async ([path, token]) => {
    const headers = {'Content-Type': 'application/x-www-form-urlencoded'};
    const body = token ? 'csrf_token=' + encodeURIComponent(token) : '';
    const response = await fetch(path, {method: 'POST', headers, body, redirect: 'manual'});
    return response.status;
}"""


def test_log_in_with_the_token_and_a_csrf_less_post_is_refused(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard(token=TOKEN)
    page = browser_page
    with server.http() as http:
        job = enqueue(http, "diag.sleep", payload={"seconds": 120})
        wait_for_status(http, job["id"], "running")

    page.goto(f"{server.base_url}/jobs/{job['id']}")
    expect(page).to_have_url(f"{server.base_url}/login?next=%2Fjobs%2F{job['id']}")
    check_page(page, "login-form")
    page.get_by_label("API token").fill("not-the-token-at-all")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("not the API token")
    page.get_by_label("API token").fill(TOKEN)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("h1")).to_have_text(f"Job {job['id']}: diag.sleep")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()

    [session] = [c for c in page.context.cookies() if c["name"] == "dominus_session"]
    assert session["httpOnly"] is True
    assert session["sameSite"] == "Strict"
    assert TOKEN not in session["value"]

    # A POST without the CSRF token, from the logged-in page itself: refused, nothing done.
    cancel = f"/jobs/{job['id']}/cancel"
    assert page.evaluate(POST_FROM_PAGE, [cancel, ""]) == 403
    assert page.evaluate(POST_FROM_PAGE, [cancel, "0" * 64]) == 403
    with server.http() as http:
        assert http.get(f"{API}/jobs/{job['id']}").json()["status"] == "running"
    # With the page's own token it goes through (a redirect back to the job's page).
    csrf = page.locator("input[name=csrf_token]").first.get_attribute("value")
    assert page.evaluate(POST_FROM_PAGE, [cancel, csrf]) in (0, 303)  # opaque redirect: 0
    with server.http() as http:
        wait_for_status(http, job["id"], "cancelled")

    # The cookie is for the pages only: /api/v1 wants the bearer token.
    cookie = f"dominus_session={session['value']}"
    with httpx.Client(base_url=server.base_url, timeout=10) as plain:
        assert plain.get(f"{API}/jobs", headers={"Cookie": cookie}).status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert plain.get(f"{API}/jobs", headers=bearer).status_code == 200

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(f"{server.base_url}/login?notice=logged-out")
    page.goto(f"{server.base_url}/")
    expect(page).to_have_url(f"{server.base_url}/login?next=%2F")
