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
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from dominus.api import create_app, streaming
from dominus.jobs import JobQueue
from dominus.runtime import Runtime
from tests.api.conftest import LOCAL_BASE_URL, api_settings, diag_registry, finish_jobs

# Examples per operation in the fuzzing phase (the coverage phase adds its own): the whole file
# stays well under a minute per backend.
FUZZ_EXAMPLES = 40


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
    """Completed, failed (dead-lettered), requeued, cancelled, pending and future jobs."""
    queue = JobQueue(runtime.store, diag_registry(), clock=runtime.clock)
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
    client: TestClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    # Streams of jobs that never finish here (no worker runs) end quickly with their `timeout`
    # event instead of after an hour.
    monkeypatch.setattr(streaming, "MAX_STREAM_SECONDS", 0.3)
    monkeypatch.setattr(streaming, "POLL_SECONDS", 0.05)
    seed(runtime)
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
    case.call_and_validate(app=fuzzed_client.app, base_url=LOCAL_BASE_URL)
