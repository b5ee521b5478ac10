"""The dashboard shows the business beside the queue (ADR 0054): the overview's renewals due
this week, open alerts and the next fire of every schedule; the watchlist's drop status; and
"acknowledge all" on the alerts. Through the app, on SQLite."""

from __future__ import annotations

import re
from datetime import date

import pytest
from fastapi.testclient import TestClient

from dominus.watchlist.drops import DropEstimate, DropPhase, DropRecord
from dominus.watchlist.store import WatchlistStore
from tests.support.api import API, runtime_of
from tests.support.dashboard import csrf_of, post
from tests.support.portfolio_rows import raise_renewal_alerts

pytestmark = pytest.mark.backends("sqlite")


def raise_alerts(client: TestClient) -> None:
    raise_renewal_alerts(runtime_of(client))


def test_the_overview_shows_renewals_alerts_and_every_schedule(client: TestClient) -> None:
    raise_alerts(client)
    html = client.get("/").text
    renewals = re.findall(r'<tr data-renewal="([^"]+)">', html)
    assert renewals == ["late.com", "soon.com"]  # within the week, the nearest first
    assert re.search(r'renewals due this week</a></span><span class="value">2<', html)
    assert re.search(r'open alerts</a></span><span class="value">3<', html)
    assert len(re.findall(r'<li data-alert="\d+">', html)) == 3
    schedules = client.get(f"{API}/schedules").json()
    assert len(schedules) > 5  # the overview once stopped at five
    listed = re.findall(r'<tr data-schedule="([^"]+)">', html)
    assert sorted(listed) == sorted(schedule["name"] for schedule in schedules)


def test_the_watchlist_shows_each_names_drop_status(client: TestClient) -> None:
    runtime = runtime_of(client)
    now = runtime.clock()
    store = WatchlistStore(runtime.engine)
    dropping = store.add("dropping.com", None, now)
    store.add("unseen.com", None, now)
    drop = DropRecord(
        statuses=("pending delete",),
        expires_on=None,
        last_changed_on=None,
        phase=DropPhase.PENDING_DELETE,
        phase_since=now,
        estimate=DropEstimate(date(2031, 1, 9), "5 days after pendingDelete was first seen"),
    )
    store.record_check(dropping, "registered", "RDAP: pending delete", now, drop=drop)
    html = client.get("/portfolio").text
    cell = re.search(r'<td data-drop="pending_delete">(.*?)</td>', html, re.S)
    assert cell and "pendingDelete" in cell.group(1)
    assert "2031-01-09" in cell.group(1) and "RDAP: pending delete" in cell.group(1)
    assert re.search(r'<td data-drop="">\s*<span class="muted">not known yet</span>', html)


def test_acknowledge_all_takes_every_open_alert(client: TestClient) -> None:
    raise_alerts(client)
    page = client.get("/portfolio").text
    assert 'action="/portfolio/alerts/ack"' in page
    assert post(client, "/portfolio/alerts/ack", None).status_code == 403
    assert len(client.get(f"{API}/alerts").json()) == 3
    done = post(client, "/portfolio/alerts/ack", csrf_of(page))
    assert done.headers["location"] == "/portfolio?notice=alerts-acknowledged"
    assert client.get(f"{API}/alerts").json() == []
    states = {alert["state"] for alert in client.get(f"{API}/alerts?all=true").json()}
    assert states == {"acknowledged"}
    after = client.get(done.headers["location"]).text
    assert "Every open alert was acknowledged." in after
    assert 'action="/portfolio/alerts/ack"' not in after  # nothing left open
    again = post(client, "/portfolio/alerts/ack", csrf_of(after))
    assert again.headers["location"] == "/portfolio?notice=no-open-alert"
