"""Defects found by a sweep of the dashboard's actions with bad input (through the app, on
SQLite): each test states what the rules ask for and failed on the code before its fix.

- A bulk requeue that names an entry that does not exist is refused, and then nothing is
  requeued (it requeued the entries before the unknown one, then answered 404).
- A sale's price or fees over the largest amount are refused as POST /api/v1/portfolio/{domain}/
  sold refuses them (the page recorded a $10,000,000,000,000 sale).
- The run form's closeouts refuse a quote never closed, as a closeout CSV file does (the rows
  after it were swallowed into one domain and the run started).
- Deleting dead-letter entries that do not exist is a 404, as requeueing them is, not a
  confirmation page for them and a notice that they were deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from tests.api.test_dashboard_dead_letters import dead_letters
from tests.support.api import API, runtime_of
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite")


def token_of(client: TestClient, path: str = "/jobs") -> str:
    return csrf_of(client.get(path).text)


def test_a_bulk_requeue_naming_an_unknown_entry_requeues_nothing(client: TestClient) -> None:
    token = token_of(client)
    [entry] = dead_letters(client, 1)
    response = client.post(
        "/dead-letters/requeue",
        data={"csrf_token": token, "entry": [str(entry["id"]), "999999"]},
        follow_redirects=False,
    )
    assert response.status_code == 404, response.text
    # The refusal wrote nothing: the entry that exists is still waiting, its job still failed.
    waiting = [listed["id"] for listed in client.get(f"{API}/dlq").json()]
    assert waiting == [entry["id"]], "the entry was requeued by a refused request"
    assert client.get(f"{API}/jobs/{entry['job_id']}").json()["status"] == "failed"


def add_entry(client: TestClient, domain: str) -> None:
    today = runtime_of(client).clock().date()
    body = {"domain": domain, "renewal_date": str(today + timedelta(30)), "acquisition_cost": 10}
    assert client.post(f"{API}/portfolio", json=body).status_code == 201


@pytest.mark.parametrize("field", ["price", "fees"])
def test_a_sale_over_the_largest_amount_is_refused_as_the_api_refuses_it(
    client: TestClient, field: str
) -> None:
    add_entry(client, "big.com")
    amounts = {"price": "5", field: "10000000000000"}  # $10 trillion: over MAX_AMOUNT
    api = client.post(
        f"{API}/portfolio/big.com/sold", json={k: float(v) for k, v in amounts.items()}
    )
    assert api.status_code == 422  # the API's refusal, for the same sale
    token = token_of(client, "/portfolio/entries/big.com")
    response = post(client, "/portfolio/entries/big.com/sold", token, **amounts)
    assert response.status_code == 422, response.headers.get("location")
    assert "The sale was not recorded" in response.text
    assert client.get(f"{API}/outcomes").json() == []
    assert client.get(f"{API}/portfolio/big.com").json()["status"] == "active"


def test_closeouts_with_a_quote_never_closed_are_refused(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(DOMINUS_PROVIDERS="sample")
    token = token_of(client, "/runs")
    closeouts = '"oldgardentools.com,12\nb.com,3\nc.com,4'
    response = post(client, "/runs", token, keywords="", brandables="", closeouts=closeouts)
    assert response.status_code == 422, response.headers.get("location")
    assert "quote" in response.text
    assert client.get(f"{API}/runs").json()["items"] == []


def test_deleting_dead_letters_that_do_not_exist_is_a_404_not_a_success(
    client: TestClient,
) -> None:
    token = token_of(client)
    asked = post(client, "/dead-letters/delete", token, entry="424242")
    assert asked.status_code == 404, asked.status_code  # not "Delete 1 entry?"
    done = post(client, "/dead-letters/delete", token, entry="424242", confirm="yes")
    assert done.status_code == 404, done.headers.get("location")  # not "...were deleted"
