"""The Appraise page takes what `dominus score` takes for one name (a listing's facts, the
availability check) and shows the comparable sales and rounded figures, in a browser's words;
the Run page shows every reason whole, the names dropped before scoring and each stage's time.
On SQLite and PostgreSQL, with the bundled sample providers (no network)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.web.rendering import for_people, money
from tests.support.api import API, finish_jobs, runtime_of
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite", "postgresql")

LISTING = {"price": "1200", "age": "12", "backlinks": "300", "wayback": "40"}


def section(html: str, start: str, end: str) -> str:
    found = re.search(re.escape(start) + "(.*?)" + re.escape(end), html, re.DOTALL)
    assert found, start
    return found.group(1)


def test_figures_are_rounded_for_people() -> None:
    assert money(12437.23) == "$12,400"
    assert money(237715.45) == "$238,000"
    assert money(-1023.84) == "−$1,020"
    assert money(144.56) == "$145"
    assert money(0.4) == "$0"
    assert money(1234.5, "EUR") == "1,230 EUR"
    assert money(None) == money(float("nan")) == money(True) == "—"
    assert for_people(999.6) == 1000.0


@pytest.fixture
def sample_client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def test_the_listing_facts_make_the_name_a_purchase(sample_client: TestClient) -> None:
    form = sample_client.get("/appraise")
    for name in ("domain", *LISTING, "check_availability"):
        assert f'name="{name}"' in form.text, name
    page = sample_client.get("/appraise", params={"domain": "homegym.com", **LISTING})
    assert page.status_code == 200
    [api] = sample_client.get(f"{API}/score", params={"domain": "homegym.com", **LISTING}).json()
    assert api["acquisition"] == "purchase"
    facts = section(page.text, '<dl class="facts">', "</dl>")
    assert "bought from a listing at $1,200" in facts
    score = api["score"]
    for figure in (
        score["expected_value"],
        score["suggested_buy_max"],
        score["money"]["expected_profit"],
        score["value"]["retail"]["p90"],
    ):
        assert money(figure) in facts, figure
    # Nothing in the figures is written to the cent.
    assert not re.search(r"\$[\d,]*\.\d", facts)
    assert not re.search(r"\d\.\d{3}", facts)
    for name, value in LISTING.items():  # the form shows what was sent
        assert f'name="{name}" value="{value}"' in page.text


def test_the_comparable_sales_are_listed(sample_client: TestClient) -> None:
    page = sample_client.get("/appraise", params={"domain": "homegym.com"}).text
    [api] = sample_client.get(f"{API}/score", params={"domain": "homegym.com"}).json()
    counted = api["score"]["market"]["sales"]
    compared = api["score"]["value"]["comparables"]
    assert counted and compared
    market = section(page, '<table id="market-sales">', "</table>")
    for sale in counted:
        assert f'<th scope="row">{sale["domain"]}</th>' in market
        assert money(sale["price"]) in market
    model = section(page, '<table id="model-comparables">', "</table>")
    for sale in compared:
        assert f'<th scope="row">{sale["domain"]}</th>' in model
        assert sale["venue"] in model


def test_the_page_speaks_to_a_browser_not_a_shell(sample_client: TestClient) -> None:
    page = sample_client.get("/appraise", params={"domain": "homegym.com"}).text
    assert "not checked (tick “Check availability” to ask)" in page
    for hint in ("--check-availability", "check_availability=true", "`dominus", "--price"):
        assert hint not in page, hint
    checked = sample_client.get(
        "/appraise", params={"domain": "homegym.com", "check_availability": "on"}
    ).text
    facts = section(checked, '<dl class="facts">', "</dl>")
    assert "not checked" not in facts
    assert 'id="check_availability" name="check_availability" value="on" checked' in checked


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("price", "abc", "asking price: 'abc' is not a number"),
        ("age", "inf", "age in years: 'inf' is not a finite number"),
        ("backlinks", "1.5", "backlinks: '1.5' is not a whole number"),
        ("price", "-5", "price"),  # in range is the listing's own rule (invalid_listing)
    ],
)
def test_a_bad_field_is_one_line(
    sample_client: TestClient, field: str, value: str, message: str
) -> None:
    page = sample_client.get("/appraise", params={"domain": "homegym.com", field: value})
    assert page.status_code == 422
    [alert] = re.findall(r'<p class="error" role="alert">(.*?)</p>', page.text)
    assert message in alert.replace("&#39;", "'")
    assert 'id="result-heading"' not in page.text


def run_to_the_end(client: TestClient) -> tuple[int, dict[str, Any]]:
    token = csrf_of(client.get("/runs").text)
    response = post(
        client,
        "/runs",
        token,
        keywords="home gym\nmeal prep",
        brandables="zentrova",
        closeouts="domain,age,backlinks,wayback,price\noldgardentools.com,12,300,90,1850\nbad..name",
    )
    assert response.status_code == 303, response.text
    run_id = int(response.headers["location"].split("/runs/")[1].split("?")[0])
    finish_jobs(runtime_of(client))
    run: dict[str, Any] = client.get(f"{API}/runs/{run_id}").json()
    return run_id, run


def test_the_run_page_shows_reasons_whole_the_dropped_names_and_stage_times(
    sample_client: TestClient,
) -> None:
    run_id, run = run_to_the_end(sample_client)
    page = sample_client.get(f"/runs/{run_id}").text
    candidates = sample_client.get(f"{API}/runs/{run_id}/candidates").json()
    reasons = [c["tier_reason"] for c in candidates]
    assert any(len(reason) > 140 for reason in reasons), reasons  # the case that was cut
    table = section(page, '<table id="candidates">', "</table>")
    for reason in reasons:
        assert f"<td>{reason}</td>" in table.replace("&#39;", "'").replace("&amp;", "&")
    dropped = sample_client.get(f"{API}/runs/{run_id}/candidates", params={"all": "true"}).json()[
        len(candidates) :
    ]
    assert dropped and any(entry["domain"] is None for entry in dropped)  # bad..name
    listed = section(page, '<table id="dropped"', "</table>").replace("&#39;", "'")
    for entry in dropped:
        name = entry["domain"] or entry["input"]
        assert f'<th scope="row">{name}</th>' in listed, name
        assert entry["dropped_reason"] in listed
    funnel = section(page, '<table id="funnel">', "</table>")
    for stage, report in run["stages"].items():
        row = section(funnel, f'<tr data-stage="{stage}">', "</tr>")
        assert f"{report['seconds']:.2f} s" in row, (stage, row)
