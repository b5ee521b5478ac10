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

import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from dominus.api import streaming
from dominus.backtest.outcomes import OutcomeIn, OutcomeInputError, checked
from dominus.jobs import JobQueue
from dominus.pipeline.appraisal import AppraisalInputError, AppraisalRequest, validate_requests
from dominus.pipeline.model import RunInput
from dominus.pipeline.service import PipelineService
from dominus.pipeline.store import PipelineStore
from dominus.portfolio.service import PortfolioInputError, valid_domain
from dominus.runtime import Runtime
from dominus.server import create_app
from dominus.watchlist.store import InvalidWatchDomainError, watched_domain
from tests.api.conftest import (
    LOCAL_BASE_URL,
    api_settings,
    diag_registry,
    finish_jobs,
    runtime_of,
)

pytestmark = pytest.mark.backends("sqlite", "postgresql")


# Examples per operation in the fuzzing phase (the coverage phase adds its own): 20 in the
# default run (92 operations and backends: the file's share of the suite stays a few minutes),
# the profile's count under `--hypothesis-profile=long`.
FUZZ_EXAMPLES = max(20, settings().max_examples)


def openapi_document() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "unused.db").touch()  # an app refuses a SQLite path with no file
        app = create_app(api_settings(f"sqlite:///{directory}/unused.db"))
        try:
            return app.openapi()
        finally:
            app.state.services.runtime.engine.dispose()


schema = schemathesis.openapi.from_dict(openapi_document())


def seed(runtime: Runtime) -> None:
    """Completed, failed (dead-lettered), requeued, cancelled, pending and future jobs, and a
    completed pipeline run (run 1) with candidates of every tier, dropped and invalid ones."""
    queue = JobQueue(runtime.store, diag_registry(), clock=runtime.clock)
    PipelineService(runtime.settings, PipelineStore(runtime.engine), queue, runtime.clock).run_now(
        RunInput(
            keywords=["home gym", "solar panels", "a..b"], brandable=["zentrova", "nikeshoes"]
        ),
        threading.Event(),
        providers="offline",
    )
    queue.enqueue_job("diag.noop")
    queue.enqueue_job("diag.fail", {"fail_times": 9}, max_attempts=1)
    queue.enqueue_job("diag.fail", {"fail_times": 9}, max_attempts=2)
    queue.enqueue_job("diag.fail", {"fail_times": 1}, max_attempts=3)
    queue.enqueue_job("diag.sleep", {"seconds": 0.01}, dedupe_key="seeded")
    finish_jobs(runtime)
    entries = runtime.store.list_dead_letters()
    queue.requeue_dead_letter(entries[0].id)
    queue.cancel(queue.enqueue_job("diag.noop").job_id)
    queue.enqueue_job("diag.sleep", {"seconds": 5}, priority=3)
    queue.enqueue_job("diag.noop", run_at=runtime.clock().replace(year=2099))


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
    client = make_client(DOMINUS_PROVIDERS="offline")
    seed(runtime_of(client))
    return client


@schema.parametrize()
@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,  # no .hypothesis directory in the repository
    suppress_health_check=list(HealthCheck),
)
def test_the_api_conforms_to_its_schema(case: schemathesis.Case, fuzzed_client: TestClient) -> None:
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


# Operations taking domain names: a string the schema allows can still be no domain (IDNA 2008
# and the DNS limits are no pattern), and one listing's facts given with several names are
# refused. Their "schema-valid data is accepted" check is replaced by a stricter one: a 4xx for
# schema-valid data must be the 422 that DOMINUS's own validation gives for that very input.
# POST /outcomes and /watchlist likewise: a valid name (and for an outcome, no price with a drop
# and a date not after today).
NAMES_BEYOND_THE_SCHEMA = {"GET /api/v1/score", "POST /api/v1/outcomes", "POST /api/v1/watchlist"}


def refused_only_for_what_dominus_refuses(
    _ctx: Any, response: Any, case: schemathesis.Case
) -> bool | None:
    if response.status_code < 400 or response.status_code >= 500:
        return None
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if case.operation.label == "POST /api/v1/outcomes":
        return _refused_outcome(response, case)
    if case.operation.label == "POST /api/v1/watchlist":
        return _watchlist_refusal(response, case)
    query = case.query or {}
    names = query.get("domain", [])
    facts = {key: query.get(key) for key in ("price", "age", "backlinks", "wayback")}
    requests = [
        AppraisalRequest(
            str(name),
            price=_number(facts["price"]),
            age=_number(facts["age"]),
            backlinks=_whole(facts["backlinks"]),
            wayback=_whole(facts["wayback"]),
        )
        for name in (names if isinstance(names, list) else [names])
    ]
    try:
        validate_requests(requests)
    except AppraisalInputError as error:
        assert response.status_code == 422, response.text
        assert response.json() == {"error": {"code": error.code, "message": error.message}}
        return None
    raise AssertionError(f"schema-valid and valid, yet {response.status_code}: {response.text}")


# The portfolio's operations take domain names and CSV files, which no schema can fully describe
# (a row's dates, amounts, a domain's IDNA rules). A 4xx for schema-valid data must be one of
# DOMINUS's own refusals: an invalid domain refused exactly as `valid_domain` refuses that input,
# an unknown entry (404), one already held (409), or a CSV the importer refused (422).
PORTFOLIO_OPERATIONS = {
    "POST /api/v1/portfolio",
    "GET /api/v1/portfolio/{domain}",
    "PATCH /api/v1/portfolio/{domain}",
    "DELETE /api/v1/portfolio/{domain}",
    "POST /api/v1/portfolio/rescore",
    "POST /api/v1/portfolio/import",
}
PORTFOLIO_REFUSALS = {
    404: {"not_found"},
    409: {"conflict"},
    415: {"unsupported_media_type"},
    422: {"invalid_domain", "invalid_import", "invalid_request"},
}


def portfolio_refusals_are_dominus_own(
    _ctx: Any, response: Any, case: schemathesis.Case
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


def _refused_outcome(response: Any, case: schemathesis.Case) -> None:
    """A schema-valid outcome is refused only with the 422 DOMINUS's own checks give."""
    try:
        checked(OutcomeIn.model_validate(case.body), datetime.now(UTC).date(), "USD")
    except OutcomeInputError as error:
        assert response.status_code == 422, response.text
        assert response.json() == {"error": {"code": "invalid_outcome", "message": error.message}}
        return
    raise AssertionError(f"schema-valid and valid, yet {response.status_code}: {response.text}")


def _watchlist_refusal(response: Any, case: schemathesis.Case) -> None:
    if response.status_code == 409:
        return  # already watched (an earlier example added it)
    try:
        watched_domain(str(case.body["domain"]))
    except InvalidWatchDomainError as error:
        assert response.status_code == 422, response.text
        assert response.json() == {"error": {"code": "invalid_domain", "message": error.message}}
        return
    raise AssertionError(f"schema-valid and valid, yet {response.status_code}: {response.text}")


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _whole(value: Any) -> int | None:
    return None if value is None else int(value)
