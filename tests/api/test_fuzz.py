"""The OpenAPI schema fuzzed with schemathesis against the app itself (ASGI, in process), on
SQLite and PostgreSQL, with diagnostic jobs enabled and a few rows of every kind present.

Each operation is one test per backend (`test_the_api_conforms_to_its_schema[GET /api/v1/jobs]
[sqlite]`), run through every schemathesis phase that applies to a single operation (schema
examples, coverage, fuzzing; valid and invalid data) with schemathesis's default checks: no
response is a server error; status code, content type, headers and body match the schema;
invalid requests are rejected and valid ones accepted; 405 responses are well-formed.

The schema is read from `app.openapi()` of an app built at import (no database is touched for
that); the cases are sent to the app of each test, which has its own database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from dominus.api import streaming
from dominus.portfolio.model import PortfolioInputError
from dominus.portfolio.service import valid_domain
from tests.support.api import LOCAL_BASE_URL, runtime_of
from tests.support.api_fuzz import (
    NAMES_BEYOND_THE_SCHEMA,
    openapi_document,
    refused_only_for_what_dominus_refuses,
    seed,
)

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# Examples per operation in the fuzzing phase (the coverage phase adds its own): 20 in the
# default run (92 operations and backends: the file's share of the suite stays a few minutes),
# the profile's count under `--hypothesis-profile=long`.
FUZZ_EXAMPLES = max(20, settings().max_examples)


schema = schemathesis.openapi.from_dict(openapi_document())


@pytest.fixture
def fuzzed_client(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    # Streams of jobs that never finish here (no worker runs) end quickly with their `timeout`
    # event instead of after an hour.
    monkeypatch.setattr(streaming, "MAX_STREAM_SECONDS", 0.3)
    monkeypatch.setattr(streaming, "POLL_SECONDS", 0.05)
    # Offline providers: `GET /score?check_availability=true` asks DNS and RDAP, and tests never
    # touch the internet.
    client = make_client(DOMINUS_PROVIDERS="sample")
    seed(runtime_of(client))
    return client


@schema.parametrize()
@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,  # no .hypothesis directory in the repository
    suppress_health_check=list(HealthCheck),
)
def test_the_api_conforms_to_its_schema(
    case: schemathesis.Case[Any], fuzzed_client: TestClient
) -> None:
    # To 127.0.0.1: the app answers to loopback names only (schemathesis says `testserver`).
    if case.operation.label in PORTFOLIO_OPERATIONS:
        case.call_and_validate(
            app=fuzzed_client.app,
            base_url=LOCAL_BASE_URL,
            excluded_checks=[positive_data_acceptance],
            additional_checks=[portfolio_refusals_are_dominus_own],
        )
        return
    if case.operation.label in NAMES_BEYOND_THE_SCHEMA:
        case.call_and_validate(
            app=fuzzed_client.app,
            base_url=LOCAL_BASE_URL,
            excluded_checks=[positive_data_acceptance],
            additional_checks=[refused_only_for_what_dominus_refuses],
        )
        return
    case.call_and_validate(app=fuzzed_client.app, base_url=LOCAL_BASE_URL)


# The portfolio's operations take domain names and CSV files, which no schema can fully describe
# (a row's dates, amounts, a domain's IDNA rules). A 4xx for schema-valid data must be one of
# DOMINUS's own refusals: an invalid domain refused exactly as `valid_domain` refuses that input,
# an unknown entry (404), one already held (409), or a CSV the importer refused (422).
PORTFOLIO_OPERATIONS = {
    "POST /api/v1/portfolio",
    "GET /api/v1/portfolio/{domain}",
    "PATCH /api/v1/portfolio/{domain}",
    "DELETE /api/v1/portfolio/{domain}",
    "POST /api/v1/portfolio/{domain}/sold",
    "POST /api/v1/portfolio/{domain}/drop",
    "POST /api/v1/portfolio/rescore",
    "POST /api/v1/portfolio/import",
}
PORTFOLIO_REFUSALS = {
    404: {"not_found"},
    409: {"conflict"},
    415: {"unsupported_media_type"},
    422: {"invalid_domain", "invalid_import", "invalid_outcome", "invalid_request"},
}


def portfolio_refusals_are_dominus_own(
    _ctx: Any, response: Any, case: schemathesis.Case[Any]
) -> bool | None:
    if response.status_code < 400 or response.status_code >= 500:
        return None
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    error = response.json()["error"]
    assert error["code"] in PORTFOLIO_REFUSALS.get(response.status_code, set()), response.text
    if error["code"] == "invalid_domain":
        body = case.body if isinstance(case.body, dict) else {}
        path = (case.path_parameters or {}).get("domain")
        name = unquote(str(path)) if path is not None else body.get("domain")
        try:
            valid_domain(str(name))
        except PortfolioInputError as refusal:
            assert error["message"] == refusal.message, response.text
            return None
        raise AssertionError(f"{name!r} is a valid domain, yet {response.text}")
    return None
