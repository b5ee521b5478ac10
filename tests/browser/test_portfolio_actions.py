"""An investor's work on the dashboard in Chromium: a CSV export previewed then imported (and the
rescore it enqueues), the names list filtered, a sale recorded from a name's page and its
history read there, and the backtest report with its plot."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import FilePayload, Page, expect

from dominus.db.engine import create_database_engine
from tests.support.api import API
from tests.support.backtest_records import add_score
from tests.support.browser import api_job, check_page, enqueue, wait_for_status
from tests.support.serving import ServeProcess

pytestmark = pytest.mark.browser


def day(days: int) -> str:
    return str(datetime.now(UTC).date() + timedelta(days))


def test_import_a_csv_file_previewed_first_then_confirmed(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard()
    page = browser_page
    export = (
        "Domain Name,Expiration Date,Registrar,Purchase Price\n"
        f"alpha.com,{day(40)},Dynadot,10\n"
        "beta.com,31/31/2031,Dynadot,12\n"
        f"gamma.io,{day(300)},Namecheap,8.50\n"
    )
    page.goto(f"{server.base_url}/portfolio")
    page.get_by_role("link", name="Import a CSV file").click()
    expect(page.locator("h1")).to_have_text("Import a CSV file")
    upload: FilePayload = {"name": "export.csv", "mimeType": "text/csv", "buffer": export.encode()}
    page.get_by_label("CSV file").set_input_files(files=[upload])
    page.get_by_label("Import the valid rows only").check()
    page.get_by_role("button", name="Preview").click()
    # The preview: the columns read, the invalid line, the rows and what would happen.
    expect(page.locator("#preview-heading")).to_have_text("Preview of export.csv")
    expect(page.locator("#columns tr[data-field=renewal_date]")).to_contain_text("Expiration Date")
    expect(page.locator("#errors tr[data-line='3']")).to_contain_text("Expiration Date")
    expect(page.locator("#rows tr[data-line='2']")).to_contain_text("add")
    expect(page.locator("#rows tr[data-line='4']")).to_contain_text("gamma.io")
    check_page(page, "portfolio-import-preview")
    with server.http() as http:
        assert http.get(f"{API}/portfolio").json() == []  # nothing written yet
        page.get_by_role("button", name="Import 2 rows").click()
        expect(page.get_by_role("status")).to_contain_text("The file was imported")
        expect(page).to_have_url(re.compile(r"/portfolio\?notice=imported&job=\d+$"))
        job_id = int(page.url.rsplit("=", 1)[1])
        assert api_job(http, job_id)["type"] == "PORTFOLIO_RESCORE"
        held = sorted(entry["domain"] for entry in http.get(f"{API}/portfolio").json())
        assert held == ["alpha.com", "gamma.io"]
        expect(page.locator("tr[data-domain='gamma.io']")).to_contain_text("Namecheap")
        # The notice links the rescore job.
        page.get_by_role("link", name=f"Job {job_id}").click()
        expect(page.locator("h1")).to_contain_text(f"Job {job_id}")


def test_filter_the_names_then_record_a_sale_and_read_the_history(
    dashboard: Callable[..., ServeProcess], browser_page: Page
) -> None:
    server = dashboard()
    page = browser_page
    with server.http() as http:
        for domain, days, registrar in [
            ("soon.com", 3, "Dynadot"),
            ("later.com", 20, "Namecheap"),
            ("brand.io", 45, "Dynadot"),
            ("far.net", 400, "Dynadot"),
        ]:
            body = {
                "domain": domain,
                "renewal_date": day(days),
                "registrar": registrar,
                "acquisition_cost": 100,
            }
            assert http.post(f"{API}/portfolio", json=body).status_code == 201
        page.goto(f"{server.base_url}/portfolio")
        page.get_by_label("Registrar").select_option("Dynadot")
        page.get_by_label("Renewal within (days)").fill("60")
        page.get_by_role("button", name="Filter").click()
        expect(page).to_have_url(re.compile(r"registrar=Dynadot.*renewal_within=60"))
        rows = page.locator("#entries-caption + thead + tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_have_attribute("data-domain", "soon.com")
        expect(rows.nth(1)).to_have_attribute("data-domain", "brand.io")
        # The filter stays in the form.
        expect(page.get_by_label("Registrar")).to_have_value("Dynadot")
        expect(page.get_by_label("Renewal within (days)")).to_have_value("60")
        check_page(page, "portfolio-filtered")
        # A date cell never wraps.
        white_space = page.locator("tr[data-domain='brand.io'] td.date").first.evaluate(
            "cell => getComputedStyle(cell).whiteSpace"
        )
        assert white_space == "nowrap"

        page.get_by_role("link", name="brand.io").click()
        expect(page.locator("h1")).to_have_text("brand.io")
        page.get_by_label("Price").fill("1,500")
        page.get_by_label("Fees and commission (optional)").fill("150")
        page.get_by_label("Venue (optional)").fill("Example Market")
        page.get_by_role("button", name="Record the sale").click()
        expect(page.get_by_role("status")).to_contain_text("The sale was recorded")
        expect(page).to_have_url(re.compile(r"/portfolio/entries/brand\.io\?notice=sold$"))
        assert http.get(f"{API}/portfolio/brand.io").json()["status"] == "sold"
        [outcome] = http.get(f"{API}/outcomes").json()
        assert (outcome["price"], outcome["fees"]) == (1500.0, 150.0)
        # The history: the verdict given when it was added, then the sale, the latest first.
        history = page.locator("#history tbody tr")
        expect(history).to_have_count(2)
        expect(history.nth(0)).to_have_attribute("data-kind", "sold")
        expect(history.nth(0)).to_contain_text("realised profit")
        expect(history.nth(1)).to_have_attribute("data-kind", "verdict")
        expect(page.locator("#details")).to_contain_text("Dynadot")
        expect(page.get_by_role("button", name="Record the sale")).to_have_count(0)
        check_page(page, "portfolio-entry-sold")


def test_the_backtest_report_shows_its_figures_and_plot(
    dashboard: Callable[..., ServeProcess], browser_page: Page, database_url: str
) -> None:
    server = dashboard()
    page = browser_page
    engine = create_database_engine(database_url)
    now = datetime.now(UTC)
    try:
        for index, (predicted, realised) in enumerate([(400, 500), (900, 600), (150, 160)]):
            scored = now - timedelta(days=200 - index * 40)
            add_score(engine, f"sold{index}.com", scored, predicted, sales=[(realised, 1.0)])
    finally:
        engine.dispose()
    with server.http() as http:
        for index, realised in enumerate([500, 600, 160]):
            sold_on = (now - timedelta(days=180 - index * 40)).date()
            body = {"domain": f"sold{index}.com", "price": realised, "date": str(sold_on)}
            assert http.post(f"{API}/outcomes", json=body).status_code == 201
        build = enqueue(http, "BACKTEST_BUILD", payload={"min_sample_size": 1})
        wait_for_status(http, build["id"], "completed")
        expected = http.get(f"{API}/backtest/report").json()
    assert expected["sample_size"] == 3
    page.goto(f"{server.base_url}/backtest")
    expect(page.locator("#backtest-summary")).to_contain_text("3 sales")
    plot = page.get_by_role("img", name=re.compile("Predicted expected value against realised"))
    expect(plot).to_be_visible()
    loaded = plot.evaluate("image => image.complete && image.naturalWidth > 0")
    assert loaded, "the plot did not load"
    expect(page.locator("#metrics tr[data-metric=mae]")).to_contain_text(
        f"{expected['engine']['mae']:,.2f}"
    )
    check_page(page, "backtest-report")
    page.get_by_role("link", name="Outcomes").first.click()
    expect(page.locator("#outcomes tbody tr")).to_have_count(3)
    check_page(page, "outcomes")
