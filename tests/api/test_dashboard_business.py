"""The dashboard shows the business beside the queue (ADR 0054): the overview's renewals due
this week, open alerts and the next fire of every schedule; the watchlist's drop status; and
"acknowledge all" on the alerts. Through the app, on SQLite."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API, runtime_of
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
