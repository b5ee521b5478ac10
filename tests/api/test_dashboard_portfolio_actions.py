"""What the dashboard does for an investor beyond the Portfolio page's lists, through the app on
SQLite and PostgreSQL: a CSV import previewed then confirmed (a rescore enqueued after it),
**Rescore now**, a sale and a drop recorded from a name's page, the list filtered by verdict,
registrar, TLD and renewal window, a name's page with its history, the outcomes and the
backtest report. Every POST needs the page's CSRF token; without it nothing is written."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.backtest import figures
from dominus.backtest.service import BacktestService
from dominus.handlers.portfolio_rescore import PORTFOLIO_RESCORE
from dominus.jobs.documents import dumped
from dominus.portfolio.model import ScoreUpdate
from dominus.portfolio.service import PortfolioService
from dominus.web.routes import portfolio_entry
from tests.api.test_dashboard_portfolio import cells, row_of, section
from tests.support.api import API, get_job, runtime_of
from tests.support.backtest_records import add_score
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def in_days(client: TestClient, days: int) -> str:
    return str(runtime_of(client).clock().date() + timedelta(days))


def import_file(client: TestClient) -> str:
    """A registrar export (aliased headers): two good rows, a bad date on line 3, a bad amount
    on line 5."""
    return (
        "Domain Name,Expiration Date,Registrar,Purchase Price\n"
        f"alpha.com,{in_days(client, 40)},Dynadot,10\n"
        "beta.com,not a date,Dynadot,12\n"
        f"gamma.io,{in_days(client, 300)},Namecheap,8.50\n"
        f"delta.net,{in_days(client, 90)},Namecheap,-3\n"
    )


def upload(
    client: TestClient, path: str, token: str | None, csv_text: str | None, **fields: str
) -> Any:
    data = dict(fields)
    if token is not None:
        data["csrf_token"] = token
    files = None if csv_text is None else {"file": ("export.csv", csv_text.encode(), "text/csv")}
    if files is None:  # a multipart body all the same, as a browser sends it
        files = {"unused": ("", b"", "application/octet-stream")}
    return client.post(path, data=data, files=files, follow_redirects=False)


def domains_held(client: TestClient) -> list[str]:
    return [entry["domain"] for entry in client.get(f"{API}/portfolio?status=all").json()]


def hidden_fields(page: str) -> dict[str, str]:
    form = re.search(r'action="/portfolio/import/confirm".*?</form>', page, re.S)
    assert form, "no confirm form on the page"
    return dict(re.findall(r'<input type="hidden" name="([a-z_0-9]+)" value="([^"]*)"', form[0]))


def test_an_import_is_previewed_row_by_row_and_imported_once_confirmed(
    client: TestClient,
) -> None:
    page = client.get("/portfolio/import")
    assert page.status_code == 200
    token = csrf_of(page.text)
    text = import_file(client)
    # Without the token the upload is refused and nothing is read.
    assert upload(client, "/portfolio/import", None, text).status_code == 403

    strict = upload(client, "/portfolio/import", token, text)
    assert strict.status_code == 200, strict.text
    # Which column fed which field.
    columns = section_of(strict.text, "columns")
    assert cells(row_of(columns, "data-field", "domain")) == ["domain", "“Domain Name”"]
    assert cells(row_of(columns, "data-field", "renewal_date")) == [
        "renewal_date",
        "“Expiration Date”",
    ]
    assert cells(row_of(columns, "data-field", "acquisition_cost")) == [
        "acquisition_cost",
        "“Purchase Price”",
    ]
    assert cells(row_of(columns, "data-field", "notes")) == ["notes", "not in the file"]
    # Errors per line, with their column.
    errors = section_of(strict.text, "errors")
    lines = re.findall(r'<tr data-line="\d+" class="preview-error">(.*?)</tr>', errors, re.S)
    assert [cells(line)[:2] for line in lines] == [
        ["3", "Expiration Date"],
        ["5", "Purchase Price"],
    ]
    assert "&#39;-3&#39; is negative" in errors
    # The valid rows, with what would happen and the values read.
    rows = section_of(strict.text, "rows")
    alpha = cells(row_of(rows, "data-line", "2"))
    assert alpha[:4] == ["2", "add", "alpha.com", in_days(client, 40)]
    assert "Dynadot" in alpha and "10.00" in alpha
    assert cells(row_of(rows, "data-line", "4"))[:3] == ["4", "add", "gamma.io"]
    assert "2 to add, 0 to update, 0 unchanged, 2 invalid" in strict.text
    # Invalid rows and no "valid rows only": no confirm button, nothing written.
    assert 'action="/portfolio/import/confirm"' not in strict.text
    assert domains_held(client) == []

    preview = upload(client, "/portfolio/import", token, text, skip_invalid="yes")
    assert preview.status_code == 200
    assert "Import 2 rows" in preview.text
    assert domains_held(client) == []  # a preview writes nothing
    confirm = hidden_fields(preview.text)
    assert confirm["skip_invalid"] == "yes"
    refused = client.post(
        "/portfolio/import/confirm",
        data={**confirm, "csrf_token": ""},
        files={"unused": ("", b"", "application/octet-stream")},
        follow_redirects=False,
    )
    assert refused.status_code == 403
    assert domains_held(client) == []

    done = client.post(
        "/portfolio/import/confirm",
        data=confirm,
        files={"unused": ("", b"", "application/octet-stream")},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    found = re.fullmatch(r"/portfolio\?notice=imported&job=(\d+)", done.headers["location"])
    assert found, done.headers["location"]
    assert sorted(domains_held(client)) == ["alpha.com", "gamma.io"]
    job = get_job(client, int(found[1]))
    assert (job["type"], job["status"]) == (PORTFOLIO_RESCORE, "pending")
    assert job["payload"].get("domain") is None  # every active name
    after = client.get(done.headers["location"]).text
    assert "The file was imported" in after
    assert f'<a href="/jobs/{found[1]}">Job {found[1]}</a>' in after

    # The same file again changes nothing: no rescore is enqueued for it.
    again = client.post(
        "/portfolio/import/confirm",
        data=confirm,
        files={"unused": ("", b"", "application/octet-stream")},
        follow_redirects=False,
    )
    assert again.headers["location"] == "/portfolio?notice=imported-unchanged"


def section_of(page: str, table_id: str) -> str:
    found = re.search(rf'<table[^>]* id="{table_id}">(.*?)</table>', page, re.S)
    assert found, f"no table {table_id}"
    return found.group(1)


def test_an_upload_that_cannot_be_imported_is_explained_and_writes_nothing(
    make_client: Any,
) -> None:
    client = make_client(DOMINUS_MAX_BODY_BYTES=16_384)
    token = csrf_of(client.get("/portfolio/import").text)
    missing = upload(client, "/portfolio/import", token, None)
    assert missing.status_code == 422
    assert "choose a CSV file" in missing.text
    too_large = upload(client, "/portfolio/import", token, "domain\n" + "a.com\n" * 1500)
    assert too_large.status_code == 413
    assert "dominus portfolio import" in too_large.text
    not_utf8 = client.post(
        "/portfolio/import",
        data={"csrf_token": token},
        files={"file": ("x.csv", "domain\ncafé.com\n".encode("latin-1"), "text/csv")},
    )
    assert not_utf8.status_code == 422
    assert "not UTF-8" in not_utf8.text
    no_domain = upload(client, "/portfolio/import", token, "thing,expires\na.com,2031-01-01\n")
    assert no_domain.status_code == 422
    assert "no domain column" in no_domain.text
    bad_preset = upload(client, "/portfolio/import", token, "domain\na.com\n", preset="../etc")
    assert bad_preset.status_code == 422
    # A confirm whose file was tampered with or lost is refused.
    lost = client.post(
        "/portfolio/import/confirm",
        data={"csrf_token": token, "file_b64": "%%%"},
        files={"unused": ("", b"", "application/octet-stream")},
    )
    assert lost.status_code == 422
    assert "upload it again" in lost.text
    assert domains_held(client) == []


def seed(client: TestClient) -> PortfolioService:
    """Names held at two registrars and three TLDs, two scored (a keep and a drop)."""
    runtime = runtime_of(client)
    for domain, days, registrar in [
        ("soon.com", 3, "Dynadot"),
        ("later.com", 20, "Namecheap"),
        ("brand.io", 45, "Dynadot"),
        ("far.net", 400, None),
    ]:
        body: dict[str, Any] = {
            "domain": domain,
            "renewal_date": in_days(client, days),
            "renewal_cost": 12.5,
            "acquisition_cost": 100.0,
        }
        if registrar:
            body["registrar"] = registrar
        assert client.post(f"{API}/portfolio", json=body).status_code == 201
    service = PortfolioService(runtime.engine, runtime.settings)
    now = runtime.clock()
    service.record_score("soon.com", ScoreUpdate(20.0, 100.0, 0.8, 150.0, {}), now)
    service.record_score("later.com", ScoreUpdate(70.0, 2000.0, 0.8, 3000.0, {}), now)
    return service


def listed(client: TestClient, query: str) -> list[str]:
    page = client.get(f"/portfolio?{query}")
    assert page.status_code == 200, page.text
    return re.findall(r'<tr data-domain="([^"]+)">', section(page.text, "entries-heading"))


def test_the_list_is_filtered_by_verdict_registrar_tld_and_renewal_window(
    client: TestClient,
) -> None:
    seed(client)
    assert listed(client, "") == ["soon.com", "later.com", "brand.io", "far.net"]
    assert listed(client, "verdict=drop") == ["soon.com"]
    assert listed(client, "verdict=keep") == ["later.com"]
    assert listed(client, "verdict=reprice") == ["brand.io", "far.net"]  # not scored yet
    assert listed(client, "registrar=dynadot") == ["soon.com", "brand.io"]
    assert listed(client, "tld=io") == ["brand.io"]
    assert listed(client, "renewal_within=30") == ["soon.com", "later.com"]
    assert listed(client, "registrar=Dynadot&renewal_within=30") == ["soon.com"]
    assert listed(client, "verdict=&registrar=&tld=&renewal_within=") == listed(client, "")
    # The form shows the filter asked for.
    page = client.get("/portfolio?registrar=Dynadot&tld=io&renewal_within=60&verdict=reprice")
    assert '<option value="Dynadot" selected>' in page.text
    assert '<option value="io" selected>' in page.text
    assert '<option value="reprice" selected>' in page.text
    assert 'name="renewal_within" min="0" max="3650" value="60"' in page.text
    assert "1 of 4 active names match the filter" in page.text
    nothing = client.get("/portfolio?tld=org")
    assert "No name matches the filter (4 listed without it)." in nothing.text
    # A window that is not a number of days is refused, as a page.
    for bad in ("-1", "abc", "99999"):
        refused = client.get(f"/portfolio?renewal_within={bad}")
        assert refused.status_code == 422, bad
        assert refused.headers["content-type"].startswith("text/html")
    assert client.get("/portfolio?verdict=maybe").status_code == 422
    # Renewal dates never wrap.
    assert re.search(r'<td class="date">\d{4}-\d{2}-\d{2}</td>', page.text)
    assert ".date, time { white-space: nowrap; }" in client.get("/static/dashboard.css").text


def test_rescore_now_enqueues_one_rescore_and_links_its_job(client: TestClient) -> None:
    seed(client)
    token = csrf_of(client.get("/portfolio").text)
    assert post(client, "/portfolio/rescore", None).status_code == 403
    assert client.get(f"{API}/jobs?type={PORTFOLIO_RESCORE}").json()["items"] == []
    first = post(client, "/portfolio/rescore", token)
    assert first.status_code == 303
    found = re.fullmatch(r"/portfolio\?notice=rescore-queued&job=(\d+)", first.headers["location"])
    assert found, first.headers["location"]
    job = get_job(client, int(found[1]))
    assert job["type"] == PORTFOLIO_RESCORE and job["payload"].get("domain") is None
    page = client.get(first.headers["location"]).text
    assert f'<a href="/jobs/{job["id"]}">Job {job["id"]}</a>' in page
    # While it is pending, the button names the same job.
    second = post(client, "/portfolio/rescore", token)
    assert second.headers["location"] == f"/portfolio?notice=rescore-pending&job={job['id']}"
    # One name, from its page.
    one = post(client, "/portfolio/rescore", token, domain="Brand.io")
    assert one.headers["location"].startswith("/portfolio/entries/brand.io?notice=rescore-queued")
    [job_id] = re.findall(r"job=(\d+)", one.headers["location"])
    assert get_job(client, int(job_id))["payload"] == {"domain": "brand.io"}
    assert post(client, "/portfolio/rescore", token, domain="nothere.com").status_code == 404
    # A `job` that is not an id is never shown as a link.
    assert "/jobs/abc" not in client.get("/portfolio?notice=rescore-queued&job=abc").text


def test_a_sale_is_recorded_from_the_names_page(client: TestClient) -> None:
    seed(client)
    page = client.get("/portfolio/entries/later.com")
    assert page.status_code == 200
    token = csrf_of(page.text)
    sale = {"price": "1,500", "fees": "225", "date": "", "venue": "Example Market"}
    assert post(client, "/portfolio/entries/later.com/sold", None, **sale).status_code == 403
    assert client.get(f"{API}/portfolio/later.com").json()["status"] == "active"

    invalid = post(client, "/portfolio/entries/later.com/sold", token, **(sale | {"price": "x"}))
    assert invalid.status_code == 422
    assert 'role="alert">The sale was not recorded: price:' in invalid.text
    assert 'value="Example Market"' in invalid.text  # the form as typed
    assert client.get(f"{API}/portfolio/later.com").json()["status"] == "active"

    done = post(client, "/portfolio/entries/later.com/sold", token, **sale)
    assert done.status_code == 303, done.text
    assert done.headers["location"] == "/portfolio/entries/later.com?notice=sold"
    entry = client.get(f"{API}/portfolio/later.com").json()
    assert entry["status"] == "sold"
    [outcome] = client.get(f"{API}/outcomes").json()
    assert (outcome["domain"], outcome["price"], outcome["fees"], outcome["venue"]) == (
        "later.com",
        1500.0,
        225.0,
        "Example Market",
    )
    # As `portfolio sold` and the API do: the backtest is built again with the sale.
    [build] = client.get(f"{API}/jobs?type=BACKTEST_BUILD").json()["items"]
    assert build["status"] == "pending"
    after = client.get(done.headers["location"]).text
    assert "The sale was recorded" in after
    history = section_of(after, "history")
    assert cells(row_of(history, "data-kind", "sold"))[1] == "sold"
    assert "Record a sale" not in after  # closed: no more ledger forms
    # Sold again: a conflict, said on the page.
    again = post(client, "/portfolio/entries/later.com/sold", token, **sale)
    assert again.status_code == 409
    assert "already sold" in again.text


def test_a_drop_is_recorded_once_confirmed(client: TestClient) -> None:
    seed(client)
    token = csrf_of(client.get("/portfolio/entries/soon.com").text)
    assert post(client, "/portfolio/entries/soon.com/drop", None, confirm="yes").status_code == 403
    unconfirmed = post(client, "/portfolio/entries/soon.com/drop", token, date="")
    assert unconfirmed.status_code == 422
    assert "tick the box to confirm the drop" in unconfirmed.text
    bad_date = post(client, "/portfolio/entries/soon.com/drop", token, confirm="yes", date="3/4")
    assert bad_date.status_code == 422
    assert "write it as YYYY-MM-DD" in bad_date.text
    assert client.get(f"{API}/portfolio/soon.com").json()["status"] == "active"
    yesterday = in_days(client, -1)
    done = post(client, "/portfolio/entries/soon.com/drop", token, confirm="yes", date=yesterday)
    assert done.headers["location"] == "/portfolio/entries/soon.com?notice=dropped"
    assert client.get(f"{API}/portfolio/soon.com").json()["status"] == "dropped"
    [outcome] = client.get(f"{API}/outcomes").json()
    assert (outcome["type"], outcome["date"], outcome["cost_basis"]) == (
        "dropped",
        yesterday,
        100.0,
    )
    # Listed among the dropped names, linked to its page.
    assert listed(client, "status=dropped") == ["soon.com"]
    assert (
        post(client, "/portfolio/entries/nothere.com/drop", token, confirm="yes").status_code == 404
    )


def test_a_names_page_shows_its_details_reasons_and_history(client: TestClient) -> None:
    service = seed(client)
    runtime = runtime_of(client)
    details = {"tier": "speculative", "tier_reason": "few comparable sales"}
    service.record_score(
        "soon.com", ScoreUpdate(25.0, 900.0, 0.7, 1200.0, details), runtime.clock()
    )
    page = client.get("/portfolio/entries/soon.com")
    assert page.status_code == 200
    text = page.text
    assert "<h1>soon.com</h1>" in text
    entry = client.get(f"{API}/portfolio/soon.com").json()
    assert entry["verdict_reason"].split()[0] in text
    assert "speculative: few comparable sales" in text
    history = section_of(text, "history")
    events = re.findall(r'<tr data-kind="([a-z]+)">', history)
    assert len(events) == len(entry["history"]) >= 2  # every change, the latest first
    first_cells = cells(re.findall(r"<tr data-kind.*?</tr>", history, re.S)[0])
    latest = entry["history"][-1]
    assert first_cells[2] == f"{latest['from']} → {latest['to']}"
    assert 'class="trademark"' not in text  # no trademark match known: nothing said
    assert client.get("/portfolio/entries/nothere.com").status_code == 404
    assert client.get("/portfolio/entries/not a name").status_code in (404, 422)
    # The list links each name to its page.
    assert 'href="/portfolio/entries/soon.com"' in client.get("/portfolio").text


def test_a_trademark_match_is_shown_first_when_the_entry_carries_one(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry document with `trademark` ({mark, rule}) has it said before anything else on
    the page, escaped; one without it (as here by default) has no such box, as the test above
    shows."""
    seed(client)

    def with_trademark(model: Any) -> dict[str, Any]:
        return {**dumped(model), "trademark": {"mark": "<ACME>", "rule": "exact match"}}

    monkeypatch.setattr(portfolio_entry, "dumped", with_trademark)
    page = client.get("/portfolio/entries/brand.io").text
    assert 'class="trademark"' in page
    assert "matches the mark “&lt;ACME&gt;” (rule: exact match)" in page
    assert page.index('class="trademark"') < page.index('id="reasons"')
    # A value that is not a {mark, rule} is not shown.
    assert portfolio_entry.trademark_of({"trademark": "ACME"}) is None
    assert portfolio_entry.trademark_of({"trademark": {"rule": "exact"}}) is None


def test_the_outcomes_list_and_the_backtest_report(client: TestClient) -> None:
    empty = client.get("/backtest")
    assert empty.status_code == 200
    assert "No sale is in the snapshot yet" in empty.text
    assert "No outcomes." in client.get("/outcomes").text
    seed(client)
    runtime = runtime_of(client)
    service = PortfolioService(runtime.engine, runtime.settings)
    service.sold("later.com", price=900.0, on=date.today() - timedelta(1), now=runtime.clock())
    service.drop("far.net", now=runtime.clock())
    page = client.get("/outcomes")
    rows = re.findall(r'<tr data-outcome="\d+">.*?</tr>', page.text, re.S)
    assert [cells(row)[1:3] for row in rows] == [["far.net", "dropped"], ["later.com", "sold"]]
    assert 'href="/portfolio/entries/later.com"' in page.text
    sold_only = client.get("/outcomes?type=sold").text
    assert "far.net" not in sold_only and "later.com" in sold_only
    assert client.get("/backtest?folds=0").status_code == 422


def test_the_backtest_page_reports_the_snapshot_as_the_api_does(client: TestClient) -> None:
    runtime = runtime_of(client)
    today = runtime.clock().date()
    for index, (predicted, realised) in enumerate([(400, 500), (900, 600), (150, 160), (80, 300)]):
        domain = f"sold{index}.com"
        scored = runtime.clock() - timedelta(days=200 - index * 30)
        add_score(runtime.engine, domain, scored, predicted, sales=[(realised * 0.9, 1.0)])
        day = (scored + timedelta(days=20)).date()
        assert day < today
        outcome = {"domain": domain, "type": "sold", "price": realised, "date": str(day)}
        assert client.post(f"{API}/outcomes", json=outcome).status_code == 201
    BacktestService(runtime.settings, runtime.engine, runtime.clock).build(min_sample_size=1)
    expected = client.get(f"{API}/backtest/report?folds=2").json()
    assert expected["sample_size"] == 4
    page = client.get("/backtest?folds=2")
    assert page.status_code == 200
    assert "<strong>4 sales</strong>" in page.text
    assert '<img class="chart" src="/backtest/report.png"' in page.text
    metrics = section_of(page.text, "metrics")
    mae = cells(row_of(metrics, "data-metric", "mae"))
    assert mae[:2] == ["MAE", figures.figure("mae", expected["engine"]["mae"])]
    within = cells(row_of(metrics, "data-metric", "within_50_percent"))
    assert within[1] == figures.figure("within_50_percent", expected["engine"]["within_50_percent"])
    for fold in expected["walk_forward"]["folds"]:
        assert f'<td class="date">{fold["trained_before"]}</td>' in page.text
    plot = client.get("/backtest/report.png")
    assert plot.status_code == 200
    assert plot.headers["content-type"] == "image/png"
    assert plot.content.startswith(b"\x89PNG")
