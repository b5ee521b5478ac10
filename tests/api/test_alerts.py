"""/api/v1/alerts on both backends: the open alerts, `all=true`, acknowledging (twice keeps the
first time; an unknown id is a 404), in the one error shape."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from tests.support.api import API, assert_error, runtime_of
from tests.support.portfolio_rows import raise_renewal_alerts

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def raise_alerts(client: TestClient) -> None:
    raise_renewal_alerts(runtime_of(client))


def test_alerts_are_listed_and_acknowledged(client: TestClient) -> None:
    assert client.get(f"{API}/alerts").json() == []
    raise_alerts(client)
    response = client.get(f"{API}/alerts")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    alerts = response.json()
    assert [(alert["domain"], alert["type"], alert["days_left"]) for alert in alerts] == [
        ("late.com", "past_due", -1),
        ("soon.com", "critical", 3),
        ("later.com", "imminent", 20),
    ]
    assert {alert["state"] for alert in alerts} == {"open"}
    today = runtime_of(client).clock().date()
    assert alerts[1]["renewal_date"] == (today + timedelta(days=3)).isoformat()

    acked = client.post(f"{API}/alerts/{alerts[1]['id']}/ack")
    assert acked.status_code == 200, acked.text
    assert acked.json()["state"] == "acknowledged"
    again = client.post(f"{API}/alerts/{alerts[1]['id']}/ack")
    assert again.json()["acknowledged_at"] == acked.json()["acknowledged_at"]
    assert [alert["domain"] for alert in client.get(f"{API}/alerts").json()] == [
        "late.com",
        "later.com",
    ]
    everything = client.get(f"{API}/alerts", params={"all": "true"}).json()
    assert [alert["state"] for alert in everything] == ["open", "acknowledged", "open"]


def test_an_unknown_alert_is_a_404(client: TestClient) -> None:
    assert_error(client.post(f"{API}/alerts/12345/ack"), 404, "not_found")
    assert_error(client.post(f"{API}/alerts/0/ack"), 422)


def test_every_open_alert_is_acknowledged_at_once(client: TestClient) -> None:
    assert client.post(f"{API}/alerts/ack").json() == []  # none open: nothing to do
    raise_alerts(client)
    one = client.get(f"{API}/alerts").json()[0]
    first_ack = client.post(f"{API}/alerts/{one['id']}/ack").json()["acknowledged_at"]
    response = client.post(f"{API}/alerts/ack")
    assert response.status_code == 200, response.text
    acked = response.json()
    assert [(alert["domain"], alert["state"]) for alert in acked] == [
        ("soon.com", "acknowledged"),
        ("later.com", "acknowledged"),
    ]  # late.com was acknowledged already: not acknowledged again
    assert client.get(f"{API}/alerts").json() == []
    everything = client.get(f"{API}/alerts", params={"all": "true"}).json()
    assert {alert["state"] for alert in everything} == {"acknowledged"}
    first = next(alert for alert in everything if alert["id"] == one["id"])
    assert first["acknowledged_at"] == first_ack  # its own acknowledgement stands
    assert client.post(f"{API}/alerts/ack").json() == []
