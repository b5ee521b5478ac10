"""Stateful fuzzing of the whole API with schemathesis: sequences of calls that follow the OpenAPI
links (`src/dominus/api/openapi_links.py`, plus the links schemathesis infers), so an operation
acts on the job, run, dead-letter entry or schedule an earlier response named: enqueue a job,
then read it, stream it, cancel it, retry it; read a dead-letter entry, requeue it, read its job;
run a schedule, cancel the job it made... On SQLite and on PostgreSQL, in process (ASGI).

Every response goes through schemathesis's checks (no server error, status code, content type,
headers and body as the schema says, stateful checks such as "a resource just created can be
read"), and one of DOMINUS's own: a request that is refused (any 4xx) leaves the database as it
was, row for row, in every table.

Few scenarios by default; `--hypothesis-profile=long` runs many more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from dominus.api import streaming
from tests.support.api import LOCAL_BASE_URL, runtime_of
from tests.support.api_fuzz import (
    NAMES_BEYOND_THE_SCHEMA,
    openapi_document,
    refused_only_for_what_dominus_refuses,
    seed,
)
from tests.support.database_state import DatabaseSnapshot, database_digest

pytestmark = pytest.mark.backends("sqlite", "postgresql")


schema = schemathesis.openapi.from_dict(openapi_document())
# Only the document's own links: schemathesis's inference also links nullable fields (a run's
# `job_id`, null for a run made in process) as if they always named a job, and sends `None`.
schema.config.phases.stateful.inference.algorithms = []

# Scenarios per backend and steps per scenario, unless the `long` profile asks for more.
SCENARIOS = 16
STEPS = 10


@pytest.fixture
def fuzzed_client(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    # As in test_fuzz: streams end quickly, providers are offline.
    monkeypatch.setattr(streaming, "MAX_STREAM_SECONDS", 0.3)
    monkeypatch.setattr(streaming, "POLL_SECONDS", 0.05)
    client = make_client(DOMINUS_PROVIDERS="sample")
    seed(runtime_of(client))
    return client


def scenario_settings() -> settings:
    chosen = settings()  # the loaded profile ('dominus' by default, 'long' on request)
    deep = chosen.max_examples > SCENARIOS
    return settings(
        max_examples=chosen.max_examples if deep else SCENARIOS,
        stateful_step_count=chosen.stateful_step_count if deep else STEPS,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def test_api_workflows_follow_their_links(fuzzed_client: TestClient) -> None:
    app = fuzzed_client.app
    engine = runtime_of(fuzzed_client).engine
    seeded = DatabaseSnapshot(engine)

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        before: str = ""

        def setup(self) -> None:
            # Every scenario starts from the seeded rows and ids: what a scenario does then
            # depends on its steps only, so a failure replays (and shrinks) as it happened.
            seeded.restore()

        def get_call_kwargs(self, case: schemathesis.Case[Any]) -> dict[str, Any]:
            # To 127.0.0.1: the app answers to loopback names only.
            return {"app": app, "base_url": LOCAL_BASE_URL}

        def before_call(self, case: schemathesis.Case[Any]) -> None:
            self.before = database_digest(engine)

        def after_call(self, response: Any, case: schemathesis.Case[Any]) -> None:
            super().after_call(response, case)
            if 400 <= response.status_code < 500:
                assert database_digest(engine) == self.before, (
                    f"{case.operation.label} was refused with {response.status_code} "
                    f"but wrote to the database: {response.text[:300]}"
                )

        def validate_response(
            self,
            response: Any,
            case: schemathesis.Case[Any],
            additional_checks: Any = None,
            **kwargs: Any,
        ) -> None:
            if case.operation.label in NAMES_BEYOND_THE_SCHEMA:
                # As in test_fuzz: a domain name is more than the schema's string.
                case.validate_response(
                    response,
                    excluded_checks=[positive_data_acceptance],
                    additional_checks=[refused_only_for_what_dominus_refuses],
                    transport_kwargs=kwargs or None,
                    recorder=self.recorder,
                )
                return
            super().validate_response(response, case, additional_checks, **kwargs)

    Workflow.run(settings=scenario_settings())


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _property_at(document: dict[str, Any], schema: dict[str, Any], pointer: str) -> Any:
    for step in pointer.strip("/").split("/"):
        schema = _resolve(document, schema)
        schema = schema["items"] if step.isdigit() else schema["properties"][step]
    return _resolve(document, schema)


def test_the_document_links_operations_through_values_that_are_always_there() -> None:
    """Every link names an operation of the document and one of its path parameters, and takes
    the value from a property the source's response always has: not nullable (a null would be
    sent as `None`), of the parameter's type."""
    document = openapi_document()
    operations = {
        operation["operationId"]: operation
        for item in document["paths"].values()
        for operation in item.values()
    }
    links = [
        (operation, status, link)
        for item in document["paths"].values()
        for operation in item.values()
        for status, response in operation["responses"].items()
        for link in response.get("links", {}).values()
    ]
    assert len(links) >= 60
    for source, status, link in links:
        target = operations[link["operationId"]]
        (name, expression), *_ = link["parameters"].items()
        parameter = next(p for p in target["parameters"] if p["name"] == name)
        assert parameter["in"] == "path"
        assert expression.startswith("$response.body#/")
        body = source["responses"][status]["content"]["application/json"]["schema"]
        value = _property_at(document, body, expression.removeprefix("$response.body#"))
        assert "anyOf" not in value and value["type"] == parameter["schema"]["type"], (
            source["operationId"],
            link,
        )
