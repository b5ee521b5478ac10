"""/api/v1/runs on SQLite and PostgreSQL, with the offline providers and a real worker."""

from __future__ import annotations

import csv
import io
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.pipeline.csv_export import cell, flatten
from dominus.pipeline.model import RunInput
from dominus.pipeline.run_export import READABLE_COLUMNS
from dominus.pipeline.store import PipelineStore
from dominus.runtime import Runtime
from tests.support.api import API, assert_error, finish_jobs, runtime_of, sse_text_events

pytestmark = pytest.mark.backends("sqlite", "postgresql")


BODY = {
    "keywords": ["home gym", "solar panels"],
    "brandableNames": ["zentrova", "nikeshoes"],
    "closeoutDomains": ["oldgardentools.com", {"domain": "x-y.net", "age": 12, "backlinks": 40}],
}


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def create(client: TestClient, body: dict[str, Any] = BODY) -> dict[str, Any]:
    response = client.post(f"{API}/runs", json=body)
    assert response.status_code == 202, response.text
    created: dict[str, Any] = response.json()
    assert response.headers["location"] == f"{API}/runs/{created['run_id']}"
    return created


def test_create_answers_202_with_ids_and_links(client: TestClient) -> None:
    created = create(client)
    run_id = created["run_id"]
    assert created["status"] == "pending"
    assert isinstance(created["job_id"], int)
    assert created["_links"] == {
        "self": f"{API}/runs/{run_id}",
        "job": f"{API}/runs/{run_id}/job",
        "candidates": f"{API}/runs/{run_id}/candidates",
        "stream": f"{API}/runs/{run_id}/stream",
    }
    job = client.get(created["_links"]["job"]).json()
    assert job["id"] == created["job_id"]
    assert job["type"] == "PIPELINE_RUN"
    assert job["payload"] == {"run_id": run_id}
    run = client.get(created["_links"]["self"]).json()
    assert run["status"] == "pending"
    assert run["input"]["brandable"] == ["zentrova", "nikeshoes"]
    assert run["input"]["closeout"][1] == {
        "domain": "x-y.net",
        "age": 12.0,
        "backlinks": 40,
        "wayback": None,
        "price": None,
    }


def test_a_worker_completes_the_run(client: TestClient) -> None:
    created = create(client)
    finish_jobs(runtime_of(client))
    run = client.get(f"{API}/runs/{created['run_id']}").json()
    assert run["status"] == "completed", run
    assert run["degraded"] is False
    assert run["sample_data"] is True
    assert set(run["stages"]) == {"generate", "dns", "rdap", "score", "trademark"}
    assert run["summary"]["recommended"] >= 1
    assert client.get(f"{API}/runs/{created['run_id']}/job").json()["status"] == "completed"
    candidates = client.get(f"{API}/runs/{created['run_id']}/candidates").json()
    by_domain = {candidate["domain"]: candidate for candidate in candidates}
    assert by_domain["nikeshoes.com"]["trademark"]["verdict"] == "blocked"
    assert by_domain["nikeshoes.com"]["recommended"] is False
    recommended = client.get(
        f"{API}/runs/{created['run_id']}/candidates", params={"recommended": True}
    ).json()
    assert recommended and all(candidate["recommended"] for candidate in recommended)
    assert [c["domain"] for c in recommended] == [c["domain"] for c in candidates][
        : len(recommended)
    ]
    events = sse_text_events(client.get(f"{API}/runs/{created['run_id']}/stream").text)
    assert events[-1] == ("end", {"run_id": created["run_id"], "status": "completed"})


def test_the_stream_follows_a_run_stage_by_stage(client: TestClient) -> None:
    created = create(client)
    runtime: Runtime = runtime_of(client)
    worker = threading.Thread(target=finish_jobs, args=(runtime,))
    worker.start()
    response = client.get(f"{API}/runs/{created['run_id']}/stream")
    worker.join()
    assert response.headers["cache-control"] == "no-store"
    events = sse_text_events(response.text)
    assert events[0][0] == "run"
    assert events[-1][0] == "end"
    statuses = [data["status"] for name, data in events if name == "run"]
    assert statuses[-1] == "completed"


def test_a_job_cancelled_before_it_ran_shows_in_the_run(client: TestClient) -> None:
    created = create(client)
    assert client.post(f"{API}/jobs/{created['job_id']}/cancel").status_code == 200
    assert client.get(f"{API}/runs/{created['run_id']}").json()["status"] == "cancelled"
    events = sse_text_events(client.get(f"{API}/runs/{created['run_id']}/stream").text)
    assert events[-1] == ("end", {"run_id": created["run_id"], "status": "cancelled"})


@pytest.mark.parametrize(
    "body",
    [{}, {"keywords": []}, {"keywords": [], "brandableNames": [], "closeoutDomains": []}],
)
def test_no_input_is_400_no_input(client: TestClient, body: dict[str, Any]) -> None:
    assert_error(client.post(f"{API}/runs", json=body), 400, "no_input")
    assert client.get(f"{API}/runs").json()["items"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"keywords": "home gym"},
        {"keywords": [5]},
        {"keywords": [""]},
        {"keywords": ["a\x00b"]},
        {"brandable": ["x"]},
        {"closeoutDomains": [{"domain": "a.com", "backlinks": False}]},
        {"closeoutDomains": [{"domain": "a.com", "age": -1}]},
        {"closeoutDomains": [{"domain": "a.com", "colour": "red"}]},
        {"closeoutDomains": [{"domain": "a.com", "price": -1}]},
        {"closeoutDomains": [{"domain": "a.com", "price": 1_000_000_001}]},
        {"closeoutDomains": [{"domain": "a.com", "price": "1200"}]},
        {"closeoutDomains": [{"domain": "a.com", "price": True}]},
    ],
)
def test_invalid_bodies_are_422(client: TestClient, body: dict[str, Any]) -> None:
    assert_error(client.post(f"{API}/runs", json=body), 422, "invalid_request")
    assert client.get(f"{API}/runs").json()["items"] == []


def test_closeout_names_are_purchases_at_their_listed_price(client: TestClient) -> None:
    """oldgardentools.com is registered (the sample RDAP data says so): as a listing it is
    bought, not registered, so it is scored and marked as a purchase with its price."""
    body = {
        "keywords": ["home gym"],
        "closeoutDomains": [
            {"domain": "oldgardentools.com", "age": 17.5, "price": 1850},
            "quietkitchen.net",
        ],
    }
    created = create(client, body)
    run = client.get(f"{API}/runs/{created['run_id']}").json()
    assert run["input"]["closeout"][0]["price"] == 1850.0
    finish_jobs(runtime_of(client))
    run = client.get(f"{API}/runs/{created['run_id']}").json()
    assert run["summary"]["purchase_candidates"] == 2
    candidates = client.get(f"{API}/runs/{created['run_id']}/candidates").json()
    by_domain = {candidate["domain"]: candidate for candidate in candidates}
    assert set(by_domain) == {"homegym.com", "oldgardentools.com", "quietkitchen.net"}
    assert (
        by_domain["oldgardentools.com"]["acquisition"],
        by_domain["oldgardentools.com"]["listed_price"],
    ) == ("purchase", 1850.0)
    assert (
        by_domain["quietkitchen.net"]["acquisition"],
        by_domain["quietkitchen.net"]["listed_price"],
    ) == ("purchase", None)
    assert (by_domain["homegym.com"]["acquisition"], by_domain["homegym.com"]["listed_price"]) == (
        "registration",
        None,
    )


def test_invalid_names_are_recorded_not_refused(client: TestClient) -> None:
    created = create(client, {"keywords": ["ok name", "bad..one"], "brandableNames": ["-x"]})
    finish_jobs(runtime_of(client))
    run = client.get(f"{API}/runs/{created['run_id']}").json()
    assert run["summary"]["invalid"] == 2
    assert run["summary"]["candidates"] == 1


def test_list_runs_newest_first_with_a_cursor(client: TestClient) -> None:
    ids = [create(client, {"keywords": [f"name{i}"]})["run_id"] for i in range(5)]
    seen: list[int] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        page = client.get(f"{API}/runs", params=params).json()
        seen += [run["run_id"] for run in page["items"]]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert seen == sorted(ids, reverse=True)


@pytest.mark.parametrize("run_id", ["424242", "9223372036854775808", "0"])
def test_unknown_runs_are_404(client: TestClient, run_id: str) -> None:
    for suffix in ("", "/job", "/candidates", "/candidates.csv", "/stream"):
        assert_error(client.get(f"{API}/runs/{run_id}{suffix}"), 404, "not_found")


def test_a_run_made_in_process_has_no_job(client: TestClient) -> None:
    runtime = runtime_of(client)
    run = PipelineStore(runtime.engine).create_run(
        RunInput(keywords=["x"]), "sample", runtime.clock()
    )
    assert_error(client.get(f"{API}/runs/{run.id}/job"), 404, "not_found")


def test_runs_need_the_token_when_one_is_set(make_client: Callable[..., TestClient]) -> None:
    client = make_client(DOMINUS_API_TOKEN="t0ken", DOMINUS_PROVIDERS="sample")
    assert_error(client.post(f"{API}/runs", json=BODY), 401, "unauthorized")
    assert_error(client.get(f"{API}/runs"), 401, "unauthorized")
    response = client.post(f"{API}/runs", json=BODY, headers={"Authorization": "Bearer t0ken"})
    assert response.status_code == 202


# --- tiers, ranking, all=true, top, CSV ---------------------------

TIER_RANK = {"recommended": 0, "speculative": 1, "rejected": 2}
FORMULA = '=HYPERLINK("http://evil.example","x")'


def finished_run(client: TestClient, body: dict[str, Any] = BODY) -> int:
    run_id: int = create(client, body)["run_id"]
    finish_jobs(runtime_of(client))
    return run_id


def test_candidates_carry_their_final_tier_and_are_ranked(client: TestClient) -> None:
    run_id = finished_run(client)
    candidates = client.get(f"{API}/runs/{run_id}/candidates").json()
    by_domain = {candidate["domain"]: candidate for candidate in candidates}
    nike = by_domain["nikeshoes.com"]
    assert (nike["tier"], nike["stage"], nike["recommended"]) == ("rejected", "trademark", False)
    assert nike["tier_reason"].startswith("trademark: blocked by mark nike (substring)")
    assert by_domain["homegym.com"]["tier"] == "recommended"
    assert by_domain["homegym.com"]["evidence"] == "keyword 33,100/mo $1.25; 4 sales"
    assert by_domain["homegym.com"]["expected_profit"] > 0
    assert by_domain["zentrova.com"]["tier"] == "speculative"
    assert by_domain["zentrova.com"]["evidence"] is None
    ranks = [TIER_RANK[candidate["tier"]] for candidate in candidates]
    assert ranks == sorted(ranks)
    recommended = [c["expected_profit"] for c in candidates if c["tier"] == "recommended"]
    assert recommended == sorted(recommended, reverse=True)
    run = client.get(f"{API}/runs/{run_id}").json()
    assert sum(run["summary"]["tiers"].values()) == run["summary"]["scored"]
    assert run["summary"]["rejected_reasons"]["trademark: blocked"] == 1


def test_all_lists_the_dropped_candidates_and_top_cuts_the_ranking(client: TestClient) -> None:
    run_id = finished_run(client)
    url = f"{API}/runs/{run_id}/candidates"
    scored = client.get(url).json()
    everything = client.get(url, params={"all": True}).json()
    assert everything[: len(scored)] == scored
    dropped = {item["domain"]: item for item in everything[len(scored) :]}
    assert dropped["solarpanels.com"]["stage"] == "dns"
    assert dropped["solarpanels.com"]["dropped_reason"] == "registered (listed in registered.txt)"
    run = client.get(f"{API}/runs/{run_id}").json()
    assert len(everything) == run["summary"]["candidates"] + run["summary"]["invalid"]
    assert client.get(url, params={"top": 2}).json() == scored[:2]
    assert (
        client.get(url, params={"all": True, "top": len(scored) + 1}).json()
        == everything[: len(scored) + 1]
    )
    page = client.get(url, params={"all": True, "offset": len(scored) - 1, "limit": 2}).json()
    assert page == everything[len(scored) - 1 : len(scored) + 1]
    recommended = client.get(url, params={"recommended": True, "all": True}).json()
    assert recommended == [c for c in scored if c["recommended"]]
    for params in ({"top": 0}, {"top": "x"}, {"top": 100_001}, {"all": "perhaps"}):
        assert_error(client.get(url, params=params), 422, "invalid_request")
        assert_error(client.get(f"{url}.csv", params=params), 422, "invalid_request")


def test_the_csv_export(client: TestClient) -> None:
    body = BODY | {"brandableNames": ["zentrova", "nikeshoes", FORMULA]}
    run_id = finished_run(client, body)
    response = client.get(
        f"{API}/runs/{run_id}/candidates.csv", params={"all": True, "all_columns": True}
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"] == (
        f'attachment; filename="run-{run_id}-candidates.csv"'
    )
    data = response.content
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\r\n") == data.count(b"\n")  # CRLF, and no line break inside a field
    listed = client.get(
        f"{API}/runs/{run_id}/candidates", params={"all": True, "limit": 10_000}
    ).json()
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert len(rows) == len(listed)
    for row, document in zip(rows, listed, strict=True):
        flat = flatten(document)
        for column, value in row.items():
            assert value == (cell(flat[column]) if column in flat else ""), (column, value)
    invalid = next(row for row in rows if row["stage"] == "generate")
    assert invalid["input"] == f"'{FORMULA}"  # the formula-injection guard
    assert '"\'=HYPERLINK(""http://evil.example"",""x"")"' in data.decode("utf-8")
    assert all(not value.startswith(("=", "+", "@")) for row in rows for value in row.values())
    negatives = [value for row in rows for value in row.values() if value.startswith("-")]
    assert all(float(value) < 0 for value in negatives)  # numbers, never a formula
    top = client.get(f"{API}/runs/{run_id}/candidates.csv", params={"top": 1})
    assert len(list(csv.reader(io.StringIO(top.text.removeprefix("\ufeff"))))) == 2


def test_the_csv_export_by_default_has_the_readable_columns(client: TestClient) -> None:
    run_id = finished_run(client)
    response = client.get(f"{API}/runs/{run_id}/candidates.csv", params={"all": True})
    assert response.status_code == 200, response.text
    rows = list(csv.reader(io.StringIO(response.text.removeprefix("\ufeff"), newline="")))
    assert rows[0] == list(READABLE_COLUMNS)
    listed = client.get(f"{API}/runs/{run_id}/candidates", params={"all": True}).json()
    assert [row[0] for row in rows[1:]] == [item["domain"] or item["input"] for item in listed]
    scored = [dict(zip(rows[0], row, strict=True)) for row in rows[1:] if row[1]]
    assert scored
    for row in scored:
        assert re.fullmatch(r"-?\d+\.\d\d", row["expected_value"]), row  # cents
        assert len(row["confidence"].split(".")[-1]) <= 3, row


def test_every_combination_of_listing_parameters_answers(client: TestClient) -> None:
    """The edges of each parameter, combined: never a server error, always the listing."""
    run_id = finished_run(client)
    url = f"{API}/runs/{run_id}/candidates"
    everything = client.get(url, params={"all": True}).json()
    for flags in ({}, {"all": True}, {"recommended": True}, {"all": True, "recommended": True}):
        for top in (None, 1, 100_000):
            for offset, limit in ((0, 1), (0, 10_000), (3, 2), (10_000_000, 10_000)):
                params = flags | {"offset": offset, "limit": limit}
                if top is not None:
                    params["top"] = top
                listed = client.get(url, params=params)
                assert listed.status_code == 200, (params, listed.text)
                exported = client.get(f"{url}.csv", params=params)
                assert exported.status_code == 200, (params, exported.text)
                rows = list(csv.reader(io.StringIO(exported.text.removeprefix("\ufeff"))))
                assert len(rows) - 1 == len(listed.json()) or not listed.json()
                if not flags:
                    end = offset + limit if top is None else min(top, offset + limit)
                    scored = [item for item in everything if "tier" in item]
                    assert listed.json() == scored[offset:end]
