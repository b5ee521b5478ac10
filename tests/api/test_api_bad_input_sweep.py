"""Bad input found by a sweep of every endpoint of the REST API (each test fails on the code it
was written against): an unknown query parameter or a body that a bodiless operation ignores
turns a narrow request into one over everything (a purge, an import that was meant as a dry run,
acknowledging every alert); strings and booleans are taken as amounts; a run of blank names is
started where the CLI refuses it; and refusals whose message is a regular expression with a NUL
in it, pydantic's internal names, a bare offset, the wrong location or Python's `csv` advice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from dominus.schema.tables import portfolio_entries
from tests.support.api import API, assert_error, prepare, runtime_of
from tests.support.portfolio_rows import raise_renewal_alerts

pytestmark = pytest.mark.backends("sqlite")

JSON = {"Content-Type": "application/json"}
CSV = {"Content-Type": "text/csv"}


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def entry_count(client: TestClient) -> int:
    with runtime_of(client).engine.connect() as connection:
        return int(
            connection.execute(select(func.count()).select_from(portfolio_entries)).scalar_one()
        )


def dead_letters(client: TestClient) -> int:
    return len(client.get(f"{API}/dlq").json())


# --- HIGH: an unknown parameter or an ignored body widens a purge to everything -------------


@pytest.mark.parametrize("query", ["older_than_day=30", "older-than-days=30", "days=30"])
def test_dlq_purge_with_an_unknown_query_parameter_purges_nothing(
    client: TestClient, query: str
) -> None:
    """`dlq purge --older-than-day 30` is refused by the CLI (no such option); the API dropped
    the misspelt filter and deleted every dead-letter entry, however recent."""
    prepare(client)
    assert dead_letters(client) == 1
    assert_error(client.delete(f"{API}/dlq?{query}"), 422, "invalid_request")
    assert dead_letters(client) == 1


def test_dlq_purge_with_the_filter_in_a_json_body_purges_nothing(client: TestClient) -> None:
    prepare(client)
    response = client.request(
        "DELETE", f"{API}/dlq", content=b'{"older_than_days": 30}', headers=JSON
    )
    assert_error(response, 422, "invalid_request")
    assert dead_letters(client) == 1


# --- MEDIUM: the same for an import meant as a dry run, and for acknowledging alerts ---------


@pytest.mark.parametrize("query", ["dry-run=true", "dryrun=true"])
def test_import_with_an_unknown_query_parameter_writes_nothing(
    client: TestClient, query: str
) -> None:
    """`dry-run` is the CLI's spelling (`--dry-run`); the API ignored it and imported."""
    response = client.post(
        f"{API}/portfolio/import?{query}",
        content=b"domain,expiry date\nexample.org,2031-01-02\n",
        headers=CSV,
    )
    assert_error(response, 422, "invalid_request")
    assert entry_count(client) == 0


def test_acknowledge_all_with_a_body_naming_one_alert_acknowledges_none(
    client: TestClient,
) -> None:
    """`dominus alerts ack` needs an id or an explicit --all; `POST /alerts/ack` with a body
    naming one alert ignored the body and acknowledged every open alert."""
    raise_renewal_alerts(runtime_of(client))
    alerts = client.get(f"{API}/alerts").json()
    assert len(alerts) == 3
    response = client.post(f"{API}/alerts/ack", json={"id": alerts[0]["id"]})
    assert_error(response, 422, "invalid_request")
    assert len(client.get(f"{API}/alerts").json()) == 3


# --- MEDIUM: "3" or true is not a number (docs/api.md, Input) --------------------------------


@pytest.mark.parametrize(
    "field",
    [
        {"acquisition_cost": "10"},
        {"acquisition_cost": True},
        {"list_price": "900"},
        {"auto_renew": "yes"},
        {"auto_renew": 1},
    ],
    ids=["cost-string", "cost-true", "list-price-string", "auto-renew-yes", "auto-renew-1"],
)
def test_portfolio_add_refuses_a_value_of_the_wrong_json_type(
    client: TestClient, field: dict[str, Any]
) -> None:
    body = {"domain": "example.com", "renewal_date": "2031-01-02", **field}
    assert_error(client.post(f"{API}/portfolio", json=body), 422, "invalid_request")
    assert entry_count(client) == 0


@pytest.mark.parametrize("price", ["100", True], ids=["string", "true"])
def test_sold_refuses_a_price_that_is_not_a_json_number(client: TestClient, price: Any) -> None:
    added = client.post(f"{API}/portfolio", json={"domain": "a.com", "renewal_date": "2031-01-02"})
    assert added.status_code == 201, added.text
    response = client.post(f"{API}/portfolio/a.com/sold", json={"price": price})
    assert_error(response, 422, "invalid_request")
    assert client.get(f"{API}/portfolio/a.com").json()["status"] == "active"
    assert client.get(f"{API}/outcomes").json() == []


@pytest.mark.parametrize(
    "field", [{"price": "100"}, {"price": True}, {"fees": "3"}], ids=["price", "true", "fees"]
)
def test_outcome_refuses_an_amount_that_is_not_a_json_number(
    client: TestClient, field: dict[str, Any]
) -> None:
    body = {"domain": "sold.com", "date": "2026-01-01", **field}
    assert_error(client.post(f"{API}/outcomes", json=body), 422, "invalid_request")
    assert client.get(f"{API}/outcomes").json() == []


# --- MEDIUM: the CLI refuses a run of blank names; the API started one -----------------------


@pytest.mark.parametrize(
    "body",
    [{"keywords": ["   "]}, {"brandable_names": [" "]}, {"closeout_domains": ["\t"]}],
    ids=["keywords", "brandable", "closeout"],
)
def test_a_run_of_blank_names_is_refused_and_starts_nothing(
    client: TestClient, body: dict[str, list[str]]
) -> None:
    """`dominus run -k "   "` strips each name, finds none and exits 2 ("give at least one
    keyword, brandable name or closeout domain"); `POST /runs` answered 202 with a run and its
    PIPELINE_RUN job."""
    response = client.post(f"{API}/runs", json=body)
    assert response.status_code in (400, 422), response.text
    assert_error(response, response.status_code)
    assert client.get(f"{API}/runs").json()["items"] == []
    assert client.get(f"{API}/jobs").json()["items"] == []


# --- LOW: messages in DOMINUS's words --------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/portfolio", {"domain": "a.com", "renewal_date": "2031-01-02", "notes": "a\x00b"}),
        ("/outcomes", {"domain": "a.com", "date": "2026-01-01", "venue": "a\x00b"}),
        ("/watchlist", {"domain": "a.com", "notes": "a\x00b"}),
        ("/runs", {"keywords": ["a\x00b"]}),
    ],
    ids=["portfolio", "outcomes", "watchlist", "runs"],
)
def test_a_nul_is_refused_in_words_not_with_a_regular_expression(
    client: TestClient, path: str, body: dict[str, Any]
) -> None:
    """The message was `notes: String should match pattern '^[^\\x00]*$'`: a regular expression
    holding the NUL itself. The CLI says `holds a NUL character, which cannot be stored`."""
    error = assert_error(client.post(f"{API}{path}", json=body), 422, "invalid_request")
    assert "\x00" not in error["message"] and "pattern" not in error["message"], error
    assert "NUL" in error["message"], error


def test_a_closeout_listing_error_names_no_pydantic_internals(client: TestClient) -> None:
    body = {"closeout_domains": [{"domain": "a.com", "age": "5"}]}
    error = assert_error(client.post(f"{API}/runs", json=body), 422, "invalid_request")
    message = error["message"]
    assert "constrained-str" not in message and "CloseoutDomain" not in message, message
    assert "closeout_domains.0.age" in message, message


@pytest.mark.parametrize("raw", [b"{", b'{"domain": "a.com",}', b"{'domain': 'a.com'}"])
def test_a_body_that_is_not_json_says_so(client: TestClient, raw: bytes) -> None:
    """The message was `1: JSON decode error`: an offset with nothing saying of what."""
    error = assert_error(client.post(f"{API}/portfolio", content=raw, headers=JSON), 422)
    assert "body" in error["message"] and not error["message"][0].isdigit(), error


def test_a_bulk_filter_time_out_of_range_is_located_in_the_body(client: TestClient) -> None:
    """The filter is in the body; the message said `query.filter.created_after`."""
    body = {"action": "retry", "filter": {"created_after": "9999-12-31T23:59:59-14:00"}}
    error = assert_error(client.post(f"{API}/jobs/bulk", json=body), 422, "invalid_request")
    assert "query." not in error["message"], error
    assert "filter.created_after" in error["message"], error


def test_an_import_with_carriage_return_line_ends_gets_no_python_advice(
    client: TestClient,
) -> None:
    """A CSV whose lines end in a bare CR (classic Mac, some Excel exports) was refused with
    `csv`'s `new-line character seen in unquoted field - do you need to open the file in
    universal-newline mode?`, advice for a Python programmer, not for the person uploading."""
    response = client.post(
        f"{API}/portfolio/import",
        content=b"domain,expiry date\rexample.org,2031-01-02\r",
        headers=CSV,
    )
    assert "universal-newline" not in response.text, response.text
    assert response.status_code in (200, 422), response.text


def test_a_name_with_a_leading_dot_is_not_said_to_have_two_dots_in_a_row(
    client: TestClient,
) -> None:
    body = {"domain": ".com", "renewal_date": "2031-01-02"}
    error = assert_error(client.post(f"{API}/portfolio", json=body), 422, "invalid_domain")
    assert "two dots in a row" not in error["message"], error
