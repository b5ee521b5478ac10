"""The dashboard's Portfolio page through the app, on SQLite and PostgreSQL (ADR 0023): the
names held with the verdicts and renewal clocks the API reports, renewals due per month for the
next 12 months, the open renewal alerts with an Acknowledge button, the watchlist with its add
form and remove buttons; every POST needs the page's CSRF token."""

from __future__ import annotations

import html
import re
import threading
from datetime import date, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.notify import LogNotifier
from dominus.portfolio.model import ScoreUpdate
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.verdicts import money_words
from dominus.renewals.check import RenewalCheck
from dominus.renewals.model import Thresholds
from tests.support.api import API, runtime_of
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# (domain, days until renewal, renewal cost, expected value: None = never scored)
HELD = [
    ("late.com", -1, 12.5, None),
    ("soon.com", 3, 12.5, 100.0),  # EV $100 × 0.8 × 1 %: $0.80 < $12.50 within the horizon
    ("later.com", 20, 7.25, 2000.0),  # $16 > $7.25: worth renewing
    ("nextyear.com", 200, 30.0, None),
    ("far.com", 500, 99.0, None),  # beyond the 12 months
]


def seed_portfolio(client: TestClient) -> date:
    """The names held (through the API, as a person adds them), two scored, one dropped by
    the ledger; the renewal check run once. Today's date (UTC) as the app sees it."""
    runtime = runtime_of(client)
    now = runtime.clock()
    today = now.date()
    for domain, days, cost, _ in [*HELD, ("gone.com", 10, 50.0, None)]:
        body = {
            "domain": domain,
            "renewal_date": str(today + timedelta(days)),
            "renewal_cost": cost,
        }
        response = client.post(f"{API}/portfolio", json=body)
        assert response.status_code == 201, response.text
    service = PortfolioService(runtime.engine, runtime.settings)
    for domain, _, _, value in HELD:
        if value is not None:
            service.record_score(domain, ScoreUpdate(50.0, value, 0.8, value * 1.5, {}), now)
    service.drop("gone.com", now=now)
    RenewalCheck(runtime.engine, LogNotifier(), Thresholds(7, 30), runtime.clock).run(
        threading.Event()
    )
    return today


def row_of(page: str, attribute: str, value: str) -> str:
    found = re.search(rf'<tr {attribute}="{re.escape(value)}">(.*?)</tr>', page, re.S)
    assert found, f"no row {attribute}={value} on the page"
    return found.group(1)


def cells(row: str) -> list[str]:
    """A row's cells as text (tags dropped, entities decoded, spaces squeezed)."""
    found = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split()) for cell in found]


def section(page: str, heading_id: str) -> str:
    found = re.search(rf'<section aria-labelledby="{heading_id}">(.*?)</section>', page, re.S)
    assert found, heading_id
    return found.group(1)


def month_starts(today: date, count: int) -> list[date]:
    months, year, month = [], today.year, today.month
    for _ in range(count):
        months.append(date(year, month, 1))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return months


def open_alerts(client: TestClient) -> list[dict[str, Any]]:
    alerts: list[dict[str, Any]] = client.get(f"{API}/alerts").json()
    return alerts


def test_the_page_lists_the_names_held_with_their_verdicts_and_renewal_clocks(
    client: TestClient,
) -> None:
    empty = client.get("/portfolio")
    assert empty.status_code == 200, empty.text
    assert "No names are held yet" in empty.text
    assert "No open renewal alerts." in empty.text
    assert "No domain is watched." in empty.text
    seed_portfolio(client)
    response = client.get("/portfolio")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    page = response.text
    assert '<a href="/portfolio" aria-current="page">Portfolio</a>' in page
    held = section(page, "entries-heading")
    assert "gone.com" not in held  # dropped by the ledger: no longer held
    # Every active entry as the API reports it: verdict, its reason, the renewal clock.
    entries = client.get(f"{API}/portfolio").json()
    assert [entry["domain"] for entry in entries] == [domain for domain, *_ in HELD]
    assert {entry["verdict"] for entry in entries} == {"keep", "drop", "reprice"}
    for entry in entries:
        row = cells(row_of(held, "data-domain", entry["domain"]))
        days = entry["days_until_renewal"]
        clock = {-1: "1 day overdue", 0: "due today", 1: "1 day"}.get(days, f"{days} days")
        assert row[:6] == [
            entry["domain"],
            entry["verdict"],
            " ".join(entry["verdict_reason"].split()),
            entry["renewal_date"],
            clock,
            money_words(entry["renewal_cost"], "USD"),
        ], row
    # The page's order is the API's: the soonest renewal first.
    positions = [held.index(f'data-domain="{domain}"') for domain, *_ in HELD]
    assert positions == sorted(positions)


def test_renewals_due_are_counted_per_month_for_the_next_twelve_months(
    client: TestClient,
) -> None:
    today = seed_portfolio(client)
    renewals = section(client.get("/portfolio").text, "renewals-heading")
    *months, end = month_starts(today, 13)
    expected = {start.strftime("%Y-%m"): [0, 0.0] for start in months}
    for _, days, cost, _ in HELD:
        renewal = today + timedelta(days)
        if renewal >= end:
            continue  # beyond the window
        key = max(date(renewal.year, renewal.month, 1), months[0]).strftime("%Y-%m")
        expected[key][0] += 1
        expected[key][1] += cost
    rows = [cells(row) for row in re.findall(r"<tr>(.*?)</tr>", renewals, re.S)]
    body = [row for row in rows if re.fullmatch(r"\d{4}-\d{2}", row[0])]
    assert body == [
        [month, str(count), money_words(cost, "USD")] for month, (count, cost) in expected.items()
    ]
    total_count = sum(count for count, _ in expected.values())
    total_cost = sum(cost for _, cost in expected.values())
    assert total_count == 4  # far.com is beyond the window, gone.com was dropped
    assert ["12 months", str(total_count), money_words(total_cost, "USD")] in rows
    # The drop verdict's money at risk (soon.com) is said too.
    assert "Money at risk on names to drop: $12.50" in client.get("/portfolio").text


def test_an_alert_is_acknowledged_from_the_page_and_a_post_without_csrf_is_refused(
    client: TestClient,
) -> None:
    seed_portfolio(client)
    alerts = open_alerts(client)
    assert [(alert["domain"], alert["type"]) for alert in alerts] == [
        ("late.com", "past_due"),
        ("soon.com", "critical"),
        ("later.com", "imminent"),
    ]
    page = client.get("/portfolio").text
    listed = section(page, "alerts-heading")
    for alert in alerts:
        row = row_of(listed, "data-alert", str(alert["id"]))
        assert alert["domain"] in row and alert["renewal_date"] in row
        assert f'action="/portfolio/alerts/{alert["id"]}/ack"' in row
    soon = alerts[1]
    assert f'aria-label="Acknowledge the critical alert for {soon["domain"]}"' in listed
    for token in (None, "", "0" * 64):
        refused = post(client, f"/portfolio/alerts/{soon['id']}/ack", token)
        assert refused.status_code == 403, refused.text
    assert open_alerts(client) == alerts  # nothing changed
    response = post(client, f"/portfolio/alerts/{soon['id']}/ack", csrf_of(page))
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/portfolio?notice=alert-acknowledged"
    assert [alert["domain"] for alert in open_alerts(client)] == ["late.com", "later.com"]
    after = client.get(response.headers["location"]).text
    assert "The alert was acknowledged." in after
    assert f'data-alert="{soon["id"]}"' not in section(after, "alerts-heading")
    # Every alert, the acknowledged one with its state and no button.
    everything = section(client.get("/portfolio?all_alerts=true").text, "alerts-heading")
    acknowledged = cells(row_of(everything, "data-alert", str(soon["id"])))
    assert acknowledged[5].startswith("acknowledged") and acknowledged[6] == "—"
    # An unknown alert is a 404 page.
    missing = post(client, "/portfolio/alerts/999999/ack", csrf_of(page))
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("text/html")


def test_a_domain_is_watched_and_unwatched_from_the_page(client: TestClient) -> None:
    token = csrf_of(client.get("/portfolio").text)
    refused = post(client, "/portfolio/watchlist", None, domain="cloudnest.com")
    assert refused.status_code == 403
    assert client.get(f"{API}/watchlist").json() == []
    response = post(
        client, "/portfolio/watchlist", token, domain=" CloudNest.com ", notes="<b>bid</b>"
    )
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/portfolio?notice=watch-added"
    [entry] = client.get(f"{API}/watchlist").json()
    assert (entry["domain"], entry["notes"]) == ("cloudnest.com", "<b>bid</b>")
    page = client.get("/portfolio").text
    watched = section(page, "watchlist-heading")
    row = row_of(watched, "data-watched", "cloudnest.com")
    assert "&lt;b&gt;bid&lt;/b&gt;" in row  # escaped, never markup
    assert cells(row)[:3] == ["cloudnest.com", "<b>bid</b>", "not checked yet"]
    assert 'action="/portfolio/watchlist/cloudnest.com/remove"' in row

    # Already watched: 409, the form as typed and why; an invalid name: 422; nothing written.
    again = post(client, "/portfolio/watchlist", token, domain="cloudnest.com", notes="again")
    assert again.status_code == 409
    assert "cloudnest.com is already on the watchlist" in again.text
    assert 'value="again"' in again.text
    invalid = post(client, "/portfolio/watchlist", token, domain="not a domain")
    assert invalid.status_code == 422
    assert 'role="alert">The domain was not added: invalid domain' in invalid.text
    assert [item["notes"] for item in client.get(f"{API}/watchlist").json()] == ["<b>bid</b>"]

    assert post(client, "/portfolio/watchlist/cloudnest.com/remove", None).status_code == 403
    assert len(client.get(f"{API}/watchlist").json()) == 1
    removed = post(client, "/portfolio/watchlist/cloudnest.com/remove", token)
    assert removed.status_code == 303
    assert removed.headers["location"] == "/portfolio?notice=watch-removed"
    assert client.get(f"{API}/watchlist").json() == []
    assert "No domain is watched." in client.get("/portfolio").text
    gone = post(client, "/portfolio/watchlist/cloudnest.com/remove", token)
    assert gone.status_code == 404
    assert "not on the watchlist" in gone.text
