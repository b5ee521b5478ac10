"""GET /api/v1/score: single-name appraisals over HTTP, on both backends: the documents (the
same as `dominus score --json`), the listing parameters, errors in the one shape, the schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dominus.jobs import utc_now
from dominus.pipeline.appraisal import AppraisalRequest, Appraiser, validate_requests
from dominus.pipeline.appraisal_result import ActiveWeights
from dominus.pipeline.runner import PipelineOptions
from dominus.pipeline.scoring_sets import weight_sets_of
from dominus.pipeline.store import PipelineStore
from dominus.providers.offline import offline_providers
from dominus.scoring import Weights
from tests.support.api import API, TOKEN, assert_error, local_client, runtime_of

pytestmark = pytest.mark.backends("sqlite", "postgresql")


SCORE = f"{API}/score"


@pytest.fixture
def offline(make_client: Callable[..., TestClient], backend: str) -> TestClient:
    return make_client(DOMINUS_PROVIDERS="sample")


def appraisals(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    response = client.get(SCORE, params=params)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    found: list[dict[str, Any]] = response.json()
    return found


def test_one_domain_one_appraisal_with_its_evidence(offline: TestClient) -> None:
    (document,) = appraisals(offline, domain="homeinsurance.com")
    assert document["domain"] == "homeinsurance.com"
    assert document["tier"] == "recommended" and document["recommended"] is True
    assert document["sample_data"] is True and document["providers"] == "offline (SAMPLE DATA)"
    score = document["score"]
    assert score["evidence"]["keyword"]["monthly_volume"] == 135000
    assert len(score["market"]["sales"]) >= 3
    assert score["money"]["holding_cost"] == 31.38
    assert document["availability"]["checked"] is False
    assert document["trademark"]["verdict"] == "clear"
    assert document["currency"] == "USD"


def test_the_document_is_the_appraisal_the_cli_prints(offline: TestClient) -> None:
    (document,) = appraisals(offline, domain="solarpanels.com")
    (name,) = validate_requests([AppraisalRequest("solarpanels.com")])
    today = runtime_of(offline).clock().date()
    expected = Appraiser(
        offline_providers(), PipelineOptions(), ActiveWeights(Weights()), today
    ).appraise(name)
    assert document == expected.to_dict()


def test_a_repeated_domain_parameter_appraises_each_in_order(offline: TestClient) -> None:
    found = appraisals(offline, domain=["zentrova.com", "applestore.com", "bücher.com"])
    assert [d["domain"] for d in found] == ["zentrova.com", "applestore.com", "xn--bcher-kva.com"]
    assert [d["tier"] for d in found] == ["speculative", "rejected", "speculative"]
    assert found[1]["tier_reason"].startswith("trademark: blocked by mark apple")


def test_a_listing_is_appraised_as_a_purchase(offline: TestClient) -> None:
    (document,) = appraisals(
        offline, domain="oldgardentools.com", price=1850, age=17.5, backlinks=340, wayback=210
    )
    assert document["acquisition"] == "purchase" and document["listed_price"] == 1850
    assert document["score"]["money"]["acquisition_cost"] == 1850
    assert document["score"]["evidence"]["expiry"]["age_years"] == 17.5
    assert document["tier"] == "rejected"


def test_availability_is_checked_only_when_asked(offline: TestClient) -> None:
    (checked,) = appraisals(offline, domain="solarpanels.com", check_availability="true")
    assert checked["availability"]["checked"] is True
    assert checked["availability"]["verdict"] == "registered"
    assert checked["tier"] == "rejected"


def test_the_active_weight_set_is_used(offline: TestClient) -> None:
    weights = {"intrinsic": 0.6, "commercial": 0.2, "market": 0.1, "expiry": 0.1}
    store = PipelineStore(runtime_of(offline).engine)
    set_id = weight_sets_of(store.engine).add("tuned", weights, "test", utc_now())
    (document,) = appraisals(offline, domain="zentrova.com")
    assert document["weights"] == {"weight_set_id": set_id, "name": "tuned", "weights": weights}


def test_the_settings_providers_are_used_and_nothing_is_labelled_sample(
    client: TestClient,
) -> None:
    (document,) = appraisals(client, domain="zentrova.com")  # real providers, no data files
    assert document["sample_data"] is False
    assert document["trademark"]["verdict"] == "unverified"
    assert document["score"]["tier"] == "speculative"
    assert document["tier"] == "rejected"  # no marks source: never cleared, as in a run


@pytest.mark.parametrize(
    ("params", "status", "code", "fragment"),
    [
        ({"domain": "bad..name"}, 422, "invalid_domain", "empty label"),
        ({"domain": "zentrova"}, 422, "invalid_domain", "no TLD"),
        ({"domain": ["ok.com", "x_y.com"]}, 422, "invalid_domain", "'x_y.com'"),
        ({}, 422, "invalid_request", "domain"),
        ({"domain": "ok.com", "age": "300"}, 422, "invalid_request", "age"),
        ({"domain": "ok.com", "age": "abc"}, 422, "invalid_request", "age"),
        ({"domain": "ok.com", "price": "-1"}, 422, "invalid_request", "price"),
        ({"domain": "ok.com", "price": "inf"}, 422, "invalid_request", "price"),
        ({"domain": "ok.com", "backlinks": "2.5"}, 422, "invalid_request", "backlinks"),
        ({"domain": ["a.com", "b.com"], "price": "5"}, 422, "invalid_listing", "one listing"),
        ({"domain": [f"n{i}.com" for i in range(21)]}, 422, "invalid_request", "domain"),
    ],
)
def test_bad_input_is_a_422_in_the_one_error_shape(
    offline: TestClient, params: dict[str, Any], status: int, code: str, fragment: str
) -> None:
    error = assert_error(offline.get(SCORE, params=params), status, code)
    assert fragment in error["message"]


def test_it_is_a_read_only_get(offline: TestClient) -> None:
    response = offline.post(SCORE, params={"domain": "zentrova.com"})
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET"


def test_it_needs_no_requested_by_header_it_changes_nothing(offline: TestClient) -> None:
    bare = local_client(cast(FastAPI, offline.app), headers={})
    with bare:
        response = bare.get(SCORE, params={"domain": "zentrova.com"})
    assert response.status_code == 200, response.text
    assert runtime_of(offline).store.list_jobs() == []
    assert PipelineStore(runtime_of(offline).engine).list_runs() == []


def test_it_needs_the_token_when_one_is_set(
    make_client: Callable[..., TestClient], backend: str
) -> None:
    authed = make_client(DOMINUS_API_TOKEN=TOKEN, DOMINUS_PROVIDERS="sample")
    assert_error(authed.get(SCORE, params={"domain": "zentrova.com"}), 401, "unauthorized")
    response = authed.get(
        SCORE, params={"domain": "zentrova.com"}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 200, response.text


def test_the_schema_documents_every_field(offline: TestClient) -> None:
    document = offline.get(f"{API}/openapi.json").json()
    operation = document["paths"][f"{API}/score"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {
        "domain",
        "price",
        "age",
        "backlinks",
        "wayback",
        "check_availability",
    }
    ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok["items"]["$ref"].endswith("/AppraisalOut")
    assert operation["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/ErrorBody"
    )
    schemas = document["components"]["schemas"]
    (appraisal,) = appraisals(offline, domain="homeinsurance.com")
    assert set(schemas["AppraisalOut"]["properties"]) == set(appraisal)
    assert set(schemas["ScoreOut"]["properties"]) == set(appraisal["score"])
    assert set(schemas["MoneyOut"]["properties"]) == set(appraisal["score"]["money"])
    assert set(schemas["SaleOut"]["properties"]) == set(appraisal["score"]["market"]["sales"][0])
    for name in ("AppraisalOut", "ScoreOut", "MoneyOut", "SaleOut", "EvidenceOut"):
        assert schemas[name]["additionalProperties"] is False, name
