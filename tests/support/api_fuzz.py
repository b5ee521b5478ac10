"""The OpenAPI document the API fuzz tests run from, the seed data and what counts as a
refusal DOMINUS means."""

from __future__ import annotations

import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import schemathesis

from dominus.backtest.model import OutcomeInputError
from dominus.backtest.outcomes import OutcomeIn, checked
from dominus.jobs import JobQueue
from dominus.pipeline.appraisal import AppraisalInputError, AppraisalRequest, validate_requests
from dominus.pipeline.model import RunInput
from dominus.pipeline.service import PipelineService
from dominus.pipeline.store import PipelineStore
from dominus.runtime import Runtime
from dominus.server import create_app
from dominus.watchlist.model import InvalidWatchDomainError, watched_domain
from tests.support.api import api_settings, diag_registry, finish_jobs


def openapi_document() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "unused.db").touch()  # an app refuses a SQLite path with no file
        app = create_app(api_settings(f"sqlite:///{directory}/unused.db"))
        try:
            return app.openapi()
        finally:
            app.state.services.runtime.engine.dispose()


def seed(runtime: Runtime) -> None:
    """Completed, failed (dead-lettered), requeued, cancelled, pending and future jobs, and a
    completed pipeline run (run 1) with candidates of every tier, dropped and invalid ones."""
    queue = JobQueue(runtime.store, diag_registry(), clock=runtime.clock)
    PipelineService(runtime.settings, PipelineStore(runtime.engine), queue, runtime.clock).run_now(
        RunInput(
            keywords=["home gym", "solar panels", "a..b"], brandable=["zentrova", "nikeshoes"]
        ),
        threading.Event(),
        providers="sample",
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


# Operations taking domain names: a string the schema allows can still be no domain (IDNA 2008
# and the DNS limits are no pattern), and one listing's facts given with several names are
# refused. Their "schema-valid data is accepted" check is replaced by a stricter one: a 4xx for
# schema-valid data must be the 422 that DOMINUS's own validation gives for that very input.
# POST /outcomes and /watchlist likewise: a valid name (and for an outcome, no price with a drop
# and a date not after today). POST /jobs: a concurrency limit without a key (a rule across two
# fields, which the schema does not state).
NAMES_BEYOND_THE_SCHEMA = {
    "GET /api/v1/score",
    "POST /api/v1/outcomes",
    "POST /api/v1/watchlist",
    "POST /api/v1/jobs",
}


def refused_only_for_what_dominus_refuses(
    _ctx: Any, response: Any, case: schemathesis.Case[Any]
) -> bool | None:
    if response.status_code < 400 or response.status_code >= 500:
        return None
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if case.operation.label == "POST /api/v1/outcomes":
        _refused_outcome(response, case)
        return None
    if case.operation.label == "POST /api/v1/watchlist":
        _watchlist_refusal(response, case)
        return None
    if case.operation.label == "POST /api/v1/jobs":
        _enqueue_refusal(response, case)
        return None
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


def _refused_outcome(response: Any, case: schemathesis.Case[Any]) -> None:
    """A schema-valid outcome is refused only with the 422 DOMINUS's own checks give."""
    try:
        checked(OutcomeIn.model_validate(case.body), datetime.now(UTC).date(), "USD")
    except OutcomeInputError as error:
        assert response.status_code == 422, response.text
        assert response.json() == {"error": {"code": "invalid_outcome", "message": error.message}}
        return
    raise AssertionError(f"schema-valid and valid, yet {response.status_code}: {response.text}")


def _enqueue_refusal(response: Any, case: schemathesis.Case[Any]) -> None:
    body = cast(dict[str, Any], case.body)
    if body.get("concurrency_limit") is not None and body.get("concurrency_key") is None:
        assert response.status_code == 422, response.text
        assert response.json()["error"]["message"] == "concurrency_limit needs a concurrency_key"
        return
    raise AssertionError(f"schema-valid and valid, yet {response.status_code}: {response.text}")


def _watchlist_refusal(response: Any, case: schemathesis.Case[Any]) -> None:
    if response.status_code == 409:
        return  # already watched (an earlier example added it)
    try:
        watched_domain(str(cast(dict[str, Any], case.body)["domain"]))
    except InvalidWatchDomainError as error:
        assert response.status_code == 422, response.text
        assert response.json() == {"error": {"code": "invalid_domain", "message": error.message}}
        return
    raise AssertionError(f"schema-valid and valid, yet {response.status_code}: {response.text}")


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _whole(value: Any) -> int | None:
    return None if value is None else int(value)
