"""POST /api/v1/jobs/bulk (ADR 0054): retry, cancel or delete jobs named by id or by a filter,
behind the token; a running job is never deleted (409, nothing deleted, "cancel"); bad input
is a one-line 422 that writes nothing; one request takes at most BULK_CAP jobs (1,000) and says how
many it left."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from dominus.jobs.selection import BULK_CAP
from tests.support.api import API, TOKEN, assert_error, enqueue, finish_jobs, get_job, runtime_of

pytestmark = pytest.mark.backends("sqlite")
LATER = "2999-01-01T00:00:00Z"
BULK = f"{API}/jobs/bulk"


def test_retry_by_id_takes_the_failed_and_says_why_it_left_the_rest(client: TestClient) -> None:
    failed = enqueue(client, "diag.fail", max_attempts=1)["id"]
    finish_jobs(runtime_of(client))
    pending = enqueue(client, "diag.noop", run_at=LATER)["id"]
    response = client.post(BULK, json={"action": "retry", "ids": [failed, pending, 987_654]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["done"] == [failed] and body["matched"] == 1 and body["cap"] == BULK_CAP
    assert body["skipped"] == [
        {
            "id": pending,
            "reason": f"job {pending} is pending; only failed or cancelled jobs can be retried",
        },
        {"id": 987_654, "reason": "no job with id 987654"},
    ]
    assert get_job(client, failed)["status"] == "pending"


def test_cancel_over_a_filter_takes_the_scheduled_jobs_only(client: TestClient) -> None:
    scheduled = [enqueue(client, "diag.noop", run_at=LATER)["id"] for _ in range(3)]
    due = enqueue(client, "diag.sleep", payload={"seconds": 30})["id"]
    response = client.post(
        BULK, json={"action": "cancel", "filter": {"status": "pending", "waiting": "scheduled"}}
    )
    body = response.json()
    assert body["done"] == scheduled and body["matched"] == 3
    assert body["excluded"] == 0 and body["beyond_cap"] == 0
    assert get_job(client, due)["status"] == "pending"
    # Waiting names pending jobs: with another status nothing matches.
    none = client.post(
        BULK, json={"action": "retry", "filter": {"status": "failed", "waiting": "due"}}
    )
    assert none.json()["matched"] == 0 and none.json()["done"] == []
    searched = client.post(
        BULK, json={"action": "delete", "filter": {"type": "diag.noop", "search": "{}"}}
    )
    assert searched.json()["done"] == scheduled  # cancelled ones can be deleted
    assert client.get(f"{API}/jobs/{scheduled[0]}").status_code == 404


def test_a_running_job_named_for_delete_refuses_the_whole_request(client: TestClient) -> None:
    runtime = runtime_of(client)
    sleeping = enqueue(client, "diag.sleep", payload={"seconds": 60})["id"]
    [running] = runtime.store.claim("w-test", ["diag.sleep"], 1, runtime.clock())
    assert running.id == sleeping
    other = enqueue(client, "diag.noop", run_at=LATER)["id"]
    refused = client.post(BULK, json={"action": "delete", "ids": [sleeping, other]})
    error = assert_error(refused, 409, "conflict")
    assert f"running jobs cannot be deleted (job {sleeping})" in error["message"]
    assert "cancel them instead" in error["message"] and "nothing was deleted" in error["message"]
    assert get_job(client, other)["status"] == "pending"
    # Over a filter, running jobs are not matched by a delete: the response counts them apart.
    body = client.post(BULK, json={"action": "delete", "filter": {}}).json()
    assert body["done"] == [other] and body["excluded"] == 1
    assert get_job(client, sleeping)["status"] == "running"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"action": "retry"}, "by_ids.ids: Field required"),
        ({"action": "retry", "ids": [1], "filter": {}}, "filter: Extra inputs are not permitted"),
        ({"action": "explode", "ids": [1]}, "action: Input should be 'retry', 'cancel'"),
        ({"action": "retry", "ids": []}, "ids: List should have at least 1 item"),
        ({"action": "retry", "ids": list(range(1, BULK_CAP + 2))}, "at most 1000 items"),
        ({"action": "retry", "ids": ["1"]}, "ids.0"),
        ({"action": "retry", "ids": [0]}, "ids.0"),
        ({"action": "retry", "filter": {"search": "x" * 201}}, "filter.search"),
        ({"action": "retry", "filter": {"colour": "red"}}, "filter.colour"),
    ],
)
def test_bad_input_is_a_one_line_422_that_writes_nothing(
    client: TestClient, body: dict[str, object], words: str
) -> None:
    job = enqueue(client, "diag.noop", run_at=LATER)["id"]
    error = assert_error(client.post(BULK, json=body), 422, "invalid_request")
    assert words in error["message"] and "\n" not in error["message"]
    assert get_job(client, job)["status"] == "pending"


def test_a_filter_takes_at_most_the_cap_and_says_how_many_are_left(
    make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dominus.jobs.bulk_plan.BULK_CAP", 2)
    client = make_client()
    jobs = [enqueue(client, "diag.noop", run_at=LATER)["id"] for _ in range(3)]
    body = client.post(BULK, json={"action": "cancel", "filter": {}}).json()
    assert body["done"] == jobs[:2] and body["matched"] == 3 and body["beyond_cap"] == 1
    again = client.post(BULK, json={"action": "cancel", "filter": {}}).json()
    assert again["done"] == jobs[2:] and again["beyond_cap"] == 0


def test_the_bulk_endpoint_needs_the_token(authed_client: TestClient) -> None:
    anonymous = authed_client.post(BULK, json={"action": "cancel", "filter": {}})
    assert_error(anonymous, 401)
    allowed = authed_client.post(
        BULK,
        json={"action": "cancel", "filter": {}},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert allowed.status_code == 200
