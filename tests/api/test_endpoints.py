"""Every /api/v1 endpoint, its success cases and every error code, on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from dominus.jobs.selection import BulkAction
from dominus.runtime import Runtime
from tests.support.api import (
    API,
    WorkerThread,
    assert_error,
    enqueue,
    finish_jobs,
    get_job,
    runtime_of,
    sse_text_events,
)
from tests.support.polling import wait_until

pytestmark = pytest.mark.backends("sqlite", "postgresql")


HUGE_IDS = ("9223372036854775807", "9223372036854775808", "99999999999999999999999999", "0", "-1")


def parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    assert parsed.tzinfo is not None, f"timestamp without offset: {value}"
    return parsed


def job_count(runtime: Runtime) -> int:
    return len(runtime.store.list_jobs(limit=1000))


# --- POST /jobs ------------------------------------------------------------------------------


def test_enqueue_answers_202_with_location_and_the_job(client: TestClient) -> None:
    response = client.post(
        f"{API}/jobs",
        json={
            "type": "diag.sleep",
            "payload": {"seconds": 2},
            "priority": 7,
            "max_attempts": 4,
            "timeout_seconds": 30,
        },
    )
    assert response.status_code == 202, response.text
    job = response.json()
    assert response.headers["location"] == f"{API}/jobs/{job['id']}"
    assert job["type"] == "diag.sleep"
    assert job["status"] == "pending"
    assert job["payload"] == {"seconds": 2.0}
    assert job["priority"] == 7
    assert job["max_attempts"] == 4
    assert job["timeout_seconds"] == 30
    assert job["attempts"] == 0
    assert job["failure_count"] == 0
    assert job["dedupe_key"] is None
    for key in ("created_at", "updated_at", "run_at"):
        parse_time(job[key])
    assert client.get(response.headers["location"]).json() == job


def test_enqueue_applies_the_job_type_defaults(client: TestClient) -> None:
    job = enqueue(client, "diag.noop")
    assert job["payload"] == {}
    assert job["priority"] == 0
    assert job["max_attempts"] >= 1
    assert abs(parse_time(job["run_at"]) - parse_time(job["created_at"])) < timedelta(seconds=1)


def test_enqueue_with_the_same_dedupe_key_answers_200_with_the_same_job(
    client: TestClient,
) -> None:
    body = {"type": "diag.noop", "dedupe_key": "nightly-report"}
    first = client.post(f"{API}/jobs", json=body)
    second = client.post(f"{API}/jobs", json=body)
    assert first.status_code == 202
    assert second.status_code == 200, second.text
    assert second.json()["id"] == first.json()["id"]
    assert second.headers["location"] == first.headers["location"]
    assert second.json()["dedupe_key"] == "nightly-report"
    other = client.post(f"{API}/jobs", json={"type": "diag.noop", "dedupe_key": "other"})
    assert other.status_code == 202
    assert other.json()["id"] != first.json()["id"]


def test_a_finished_job_frees_its_dedupe_key(client: TestClient) -> None:
    first = enqueue(client, dedupe_key="k")
    assert client.post(f"{API}/jobs/{first['id']}/cancel").status_code == 200
    second = client.post(f"{API}/jobs", json={"type": "diag.noop", "dedupe_key": "k"})
    assert second.status_code == 202
    assert second.json()["id"] != first["id"]


def test_run_at_with_an_offset_is_converted_to_utc(client: TestClient) -> None:
    job = enqueue(client, run_at="2030-01-01T12:00:00+02:00")
    assert parse_time(job["run_at"]) == datetime(2030, 1, 1, 10, 0, tzinfo=UTC)
    assert parse_time(job["run_at"]).utcoffset() == timedelta(0)


def test_run_at_without_an_offset_is_taken_as_utc(client: TestClient) -> None:
    job = enqueue(client, run_at="2030-01-01T12:00:00")
    assert parse_time(job["run_at"]) == datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


BAD_BODIES: list[tuple[str, Any]] = [
    ("empty object", {}),
    ("extra field", {"type": "diag.noop", "colour": "red"}),
    ("type not a string", {"type": 5}),
    ("empty type", {"type": ""}),
    ("payload not an object", {"type": "diag.noop", "payload": [1, 2]}),
    ("priority not an integer", {"type": "diag.noop", "priority": "high"}),
    ("priority too high", {"type": "diag.noop", "priority": 1001}),
    ("priority too low", {"type": "diag.noop", "priority": -1001}),
    ("max_attempts zero", {"type": "diag.noop", "max_attempts": 0}),
    ("max_attempts too high", {"type": "diag.noop", "max_attempts": 1001}),
    ("timeout zero", {"type": "diag.noop", "timeout_seconds": 0}),
    ("timeout too long", {"type": "diag.noop", "timeout_seconds": 7 * 86_400 + 1}),
    ("run_at not a time", {"type": "diag.noop", "run_at": "tomorrow"}),
    ("empty dedupe key", {"type": "diag.noop", "dedupe_key": ""}),
    ("dedupe key too long", {"type": "diag.noop", "dedupe_key": "k" * 301}),
    ("body is a list", [{"type": "diag.noop"}]),
    ("body is a string", "diag.noop"),
]


@pytest.mark.parametrize(("case", "body"), BAD_BODIES, ids=[case for case, _ in BAD_BODIES])
def test_invalid_requests_are_422_invalid_request_and_write_nothing(
    client: TestClient, runtime: Runtime, case: str, body: Any
) -> None:
    response = client.post(f"{API}/jobs", json=body)
    assert_error(response, 422, "invalid_request")
    assert job_count(runtime) == 0, case


def test_malformed_json_is_422_invalid_request(client: TestClient, runtime: Runtime) -> None:
    for content in (b"{not json", b"", b'{"type": "diag.noop",}'):
        response = client.post(
            f"{API}/jobs", content=content, headers={"content-type": "application/json"}
        )
        assert_error(response, 422, "invalid_request")
    assert job_count(runtime) == 0


def test_a_body_that_is_not_json_is_rejected(client: TestClient, runtime: Runtime) -> None:
    response = client.post(
        f"{API}/jobs", content=b"type=diag.noop", headers={"content-type": "text/plain"}
    )
    error = assert_error(response, response.status_code)
    assert response.status_code in (415, 422), error
    assert job_count(runtime) == 0


def test_the_message_of_invalid_request_names_the_field(client: TestClient) -> None:
    error = assert_error(
        client.post(f"{API}/jobs", json={"type": "diag.noop", "priority": 5000}),
        422,
        "invalid_request",
    )
    assert "priority" in error["message"]
    error = assert_error(
        client.post(f"{API}/jobs", json={"type": "diag.noop", "colour": 1}), 422, "invalid_request"
    )
    assert "colour" in error["message"]


def test_an_unknown_job_type_is_422_unknown_job_type(client: TestClient, runtime: Runtime) -> None:
    error = assert_error(
        client.post(f"{API}/jobs", json={"type": "no.such.type"}), 422, "unknown_job_type"
    )
    assert "no.such.type" in error["message"]
    assert job_count(runtime) == 0


def test_diagnostic_jobs_are_unknown_unless_enabled(
    make_client: Callable[..., TestClient],
) -> None:
    plain = make_client(DOMINUS_DIAGNOSTIC_JOBS=False)
    assert_error(plain.post(f"{API}/jobs", json={"type": "diag.noop"}), 422, "unknown_job_type")


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"seconds": -1}, "seconds"),
        ({"seconds": "long"}, "seconds"),
        ({"seconds": 1, "snooze": True}, "snooze"),
    ],
)
def test_an_invalid_payload_is_422_invalid_payload_naming_the_field(
    client: TestClient, runtime: Runtime, payload: dict[str, Any], field: str
) -> None:
    response = client.post(f"{API}/jobs", json={"type": "diag.sleep", "payload": payload})
    error = assert_error(response, 422, "invalid_payload")
    assert field in error["message"]
    assert "diag.sleep" in error["message"]
    assert job_count(runtime) == 0


def test_a_run_at_before_year_1_in_utc_is_due_now(client: TestClient, runtime: Runtime) -> None:
    """ADR 0027: a well-formed time whose UTC value falls before the calendar is long past, so
    the job is due now (found by the stateful fuzz: it was a 422 for schema-valid input)."""
    job = enqueue(client, run_at="0001-01-01T00:00:00+02:03")
    assert parse_time(job["run_at"]) == datetime.min.replace(tzinfo=UTC)
    finish_jobs(runtime)
    assert get_job(client, job["id"])["status"] == "completed"


def test_a_run_at_after_year_9999_in_utc_waits_for_the_calendars_end(
    client: TestClient, runtime: Runtime
) -> None:
    job = enqueue(client, run_at="9999-12-31T23:59:59-14:00")
    assert parse_time(job["run_at"]) == datetime.max.replace(tzinfo=UTC)
    finish_jobs(runtime)
    assert get_job(client, job["id"])["status"] == "pending"


def test_a_full_queue_is_429_queue_full_with_retry_after(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(JOB_QUEUE_MAX_DEPTH=2)
    runtime = runtime_of(client)
    first = enqueue(client)
    enqueue(client)
    response = client.post(f"{API}/jobs", json={"type": "diag.noop"})
    assert_error(response, 429, "queue_full")
    assert int(response.headers["retry-after"]) > 0
    assert "location" not in response.headers
    assert job_count(runtime) == 2
    # A duplicate of an active job is not a new job: still answered while the queue is full.
    # A finished job frees its place.
    assert client.post(f"{API}/jobs/{first['id']}/cancel").status_code == 200
    assert client.post(f"{API}/jobs", json={"type": "diag.noop"}).status_code == 202


# --- GET /jobs --------------------------------------------------------------------------------


def test_list_jobs_newest_first_with_no_store(client: TestClient) -> None:
    ids = [enqueue(client)["id"] for _ in range(4)]
    response = client.get(f"{API}/jobs")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    page = response.json()
    assert [job["id"] for job in page["items"]] == sorted(ids, reverse=True)
    assert page["next_cursor"] is None


def test_list_jobs_on_an_empty_queue(client: TestClient) -> None:
    assert client.get(f"{API}/jobs").json() == {"items": [], "next_cursor": None}


def test_list_jobs_filters_by_status_and_type(client: TestClient) -> None:
    noops = [enqueue(client, "diag.noop")["id"] for _ in range(3)]
    sleeps = [enqueue(client, "diag.sleep")["id"] for _ in range(2)]
    client.post(f"{API}/jobs/{noops[0]}/cancel")
    client.post(f"{API}/jobs/{sleeps[1]}/cancel")

    def ids(**params: Any) -> list[int]:
        response = client.get(f"{API}/jobs", params=params)
        assert response.status_code == 200, response.text
        return [job["id"] for job in response.json()["items"]]

    assert ids(type="diag.sleep") == sorted(sleeps, reverse=True)
    assert ids(status="cancelled") == sorted([noops[0], sleeps[1]], reverse=True)
    assert ids(status="pending", type="diag.noop") == sorted(noops[1:], reverse=True)
    assert ids(status="completed") == []
    assert ids(type="no.such.type") == []


def test_list_jobs_filters_by_creation_time(client: TestClient) -> None:
    jobs = [enqueue(client) for _ in range(3)]
    times = [parse_time(job["created_at"]) for job in jobs]
    assert times == sorted(times)
    middle = jobs[1]["created_at"]

    def ids(**params: Any) -> list[int]:
        response = client.get(f"{API}/jobs", params=params)
        assert response.status_code == 200, response.text
        return [job["id"] for job in response.json()["items"]]

    if times[0] < times[1] < times[2]:
        assert ids(created_after=middle) == [jobs[2]["id"]]
        assert ids(created_before=middle) == [jobs[0]["id"]]
    hour_ago = (times[0] - timedelta(hours=1)).isoformat()
    in_an_hour = (times[2] + timedelta(hours=1)).isoformat()
    everything = [job["id"] for job in reversed(jobs)]
    assert ids(created_after=hour_ago, created_before=in_an_hour) == everything
    assert ids(created_after=in_an_hour) == []
    assert ids(created_before=hour_ago) == []
    # The same instant written with another offset, and a time without offset (UTC).
    shifted = (times[0] - timedelta(hours=1)).astimezone(timezone(timedelta(hours=5))).isoformat()
    assert ids(created_after=shifted) == everything
    naive = (times[2] + timedelta(hours=1)).astimezone(UTC).replace(tzinfo=None).isoformat()
    assert ids(created_before=naive) == everything


def test_cursor_pagination_walks_every_job_once(client: TestClient) -> None:
    ids = [enqueue(client)["id"] for _ in range(7)]
    seen: list[int] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor is not None:
            params["cursor"] = cursor
        page = client.get(f"{API}/jobs", params=params).json()
        pages += 1
        assert len(page["items"]) <= 3
        seen.extend(job["id"] for job in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert cursor == page["items"][-1]["id"]
        assert pages < 10
    assert seen == sorted(ids, reverse=True)
    assert len(set(seen)) == len(seen)
    assert pages == 3


def test_cursor_pagination_with_filters(client: TestClient) -> None:
    sleeps = []
    for _ in range(5):
        enqueue(client, "diag.noop")
        sleeps.append(enqueue(client, "diag.sleep")["id"])
    seen: list[int] = []
    params: dict[str, Any] = {"limit": 2, "type": "diag.sleep"}
    while True:
        page = client.get(f"{API}/jobs", params=params).json()
        seen.extend(job["id"] for job in page["items"])
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert seen == sorted(sleeps, reverse=True)


@pytest.mark.parametrize(
    "query",
    [
        "status=bogus",
        "limit=0",
        "limit=1001",
        "limit=ten",
        "cursor=0",
        "cursor=abc",
        "created_after=yesterday",
        "created_before=2030-13-01T00:00:00Z",
        "type=" + "t" * 201,
    ],
)
def test_list_jobs_rejects_bad_parameters_with_422(client: TestClient, query: str) -> None:
    assert_error(client.get(f"{API}/jobs?{query}"), 422, "invalid_request")


@pytest.mark.parametrize(
    "query",
    ["created_after=9999-12-31T23:59:59-14:00", "created_before=0001-01-01T00:00:00%2B14:00"],
)
def test_list_jobs_with_times_at_the_edge_of_the_calendar_is_not_a_server_error(
    client: TestClient, query: str
) -> None:
    """Bad input is never a 5xx: a well-formed time whose UTC value falls outside the calendar
    is either rejected (422) or answered (no job was created after year 9999 or before year 1)."""
    enqueue(client)
    response = client.get(f"{API}/jobs?{query}")
    assert response.status_code < 500, (response.status_code, response.text)
    if response.status_code == 200:
        assert response.json()["items"] == []
    else:
        assert_error(response, 422, "invalid_request")


def test_a_cursor_beyond_every_id_lists_from_the_newest(client: TestClient) -> None:
    ids = [enqueue(client)["id"] for _ in range(2)]
    for cursor in ("9223372036854775807", "99999999999999999999999"):
        response = client.get(f"{API}/jobs", params={"cursor": cursor})
        assert response.status_code == 200, response.text
        assert [job["id"] for job in response.json()["items"]] == sorted(ids, reverse=True)


# --- GET /jobs/{id} and /jobs/{id}/events -----------------------------------------------------


def test_get_job(client: TestClient) -> None:
    job = enqueue(client, "diag.sleep", payload={"seconds": 0.5})
    response = client.get(f"{API}/jobs/{job['id']}")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert response.json() == job


@pytest.mark.parametrize("suffix", ["", "/events", "/stream", "/cancel", "/retry"])
def test_unknown_and_huge_job_ids_are_404_not_found(client: TestClient, suffix: str) -> None:
    enqueue(client)
    method = "POST" if suffix in ("/cancel", "/retry") else "GET"
    for job_id in ("424242", *HUGE_IDS):
        response = client.request(method, f"{API}/jobs/{job_id}{suffix}")
        assert_error(response, 404, "not_found")


@pytest.mark.parametrize("job_id", ["abc", "1.5", "1e3", "%20"])
def test_a_job_id_that_is_not_an_integer_is_422(client: TestClient, job_id: str) -> None:
    for suffix in ("", "/events", "/stream"):
        assert_error(client.get(f"{API}/jobs/{job_id}{suffix}"), 422, "invalid_request")
    for suffix in ("/cancel", "/retry"):
        assert_error(client.post(f"{API}/jobs/{job_id}{suffix}"), 422, "invalid_request")


def test_job_events_of_a_job_with_a_failed_attempt_and_a_retry(
    client: TestClient, runtime: Runtime
) -> None:
    failing = enqueue(client, "diag.fail", payload={"fail_times": 1}, max_attempts=3)
    quiet = enqueue(client)
    finish_jobs(runtime)
    done = get_job(client, failing["id"])
    assert done["status"] == "completed"
    assert done["result"] == {"failures_before_success": 1}
    assert done["attempts"] == 2
    response = client.get(f"{API}/jobs/{failing['id']}/events")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    events = response.json()
    kinds = [event["kind"] for event in events]
    assert kinds == ["failed", "retry_scheduled"], events
    assert events[0]["attempt"] == 1
    assert "diagnostic failure" in events[0]["message"]
    assert [event["id"] for event in events] == sorted(event["id"] for event in events)
    for event in events:
        parse_time(event["at"])
    assert client.get(f"{API}/jobs/{quiet['id']}/events").json() == []


# --- GET /jobs/{id}/stream ----------------------------------------------------------------------


def test_stream_follows_a_job_to_its_end(client: TestClient, runtime: Runtime) -> None:
    worker = WorkerThread(runtime).start()
    try:
        job = enqueue(client, "diag.sleep", payload={"seconds": 1.5})
        with client.stream("GET", f"{API}/jobs/{job['id']}/stream") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["cache-control"] == "no-store"
            body = "".join(response.iter_text())
    finally:
        worker.stop()
    events = sse_text_events(body)
    names = [name for name, _ in events]
    assert names[-1] == "end", names
    assert set(names[:-1]) == {"job"}, names
    assert events[-1][1] == {"id": job["id"], "status": "completed"}
    documents = [data for name, data in events if name == "job"]
    assert all(document["id"] == job["id"] for document in documents)
    statuses = [document["status"] for document in documents]
    assert "running" in statuses, statuses
    assert statuses[-1] == "completed", statuses
    assert documents[-1]["result"] == {"slept_seconds": 1.5}
    assert any(document["progress"] for document in documents), documents


def test_stream_of_a_finished_job_ends_at_once(client: TestClient) -> None:
    job = enqueue(client)
    client.post(f"{API}/jobs/{job['id']}/cancel")
    response = client.get(f"{API}/jobs/{job['id']}/stream")
    assert response.status_code == 200
    events = sse_text_events(response.text)
    assert [name for name, _ in events] == ["job", "end"]
    assert events[0][1]["status"] == "cancelled"
    assert events[1][1] == {"id": job["id"], "status": "cancelled"}


# --- POST /jobs/{id}/cancel -----------------------------------------------------------------


def test_cancel_a_pending_job(client: TestClient) -> None:
    job = enqueue(client)
    response = client.post(f"{API}/jobs/{job['id']}/cancel")
    assert response.status_code == 200
    cancelled = response.json()
    assert cancelled["status"] == "cancelled"
    assert cancelled["finished_at"] is not None
    assert get_job(client, job["id"])["status"] == "cancelled"
    kinds = [event["kind"] for event in client.get(f"{API}/jobs/{job['id']}/events").json()]
    assert kinds == ["cancelled"]


def test_cancel_a_running_job_asks_its_worker(client: TestClient, runtime: Runtime) -> None:
    worker = WorkerThread(runtime).start()
    try:
        job = enqueue(client, "diag.sleep", payload={"seconds": 30})
        wait_until(lambda: get_job(client, job["id"])["status"] == "running")
        response = client.post(f"{API}/jobs/{job['id']}/cancel")
        assert response.status_code == 200, response.text
        asked = response.json()
        assert asked["status"] == "running"
        assert asked["cancel_requested_at"] is not None
        finished = wait_until(
            lambda: (found := get_job(client, job["id"]))["status"] == "cancelled" and found
        )
    finally:
        worker.stop()
    assert finished["finished_at"] is not None
    kinds = [event["kind"] for event in client.get(f"{API}/jobs/{job['id']}/events").json()]
    assert kinds == ["cancel_requested", "cancelled"]


def test_cancel_a_finished_job_is_409_conflict(client: TestClient, runtime: Runtime) -> None:
    done = enqueue(client)
    finish_jobs(runtime)
    assert get_job(client, done["id"])["status"] == "completed"
    assert_error(client.post(f"{API}/jobs/{done['id']}/cancel"), 409, "conflict")
    cancelled = enqueue(client)
    client.post(f"{API}/jobs/{cancelled['id']}/cancel")
    assert_error(client.post(f"{API}/jobs/{cancelled['id']}/cancel"), 409, "conflict")
    assert get_job(client, done["id"])["status"] == "completed"


# --- POST /jobs/{id}/retry ------------------------------------------------------------------


def test_retry_a_failed_job(client: TestClient, runtime: Runtime) -> None:
    job = enqueue(client, "diag.fail", payload={"fail_times": 5}, max_attempts=2)
    finish_jobs(runtime)
    failed = get_job(client, job["id"])
    assert failed["status"] == "failed"
    assert failed["attempts"] == 2
    response = client.post(f"{API}/jobs/{job['id']}/retry")
    assert response.status_code == 200, response.text
    retried = response.json()
    assert retried["id"] == job["id"]
    assert retried["status"] == "pending"
    assert retried["attempts"] == 0
    assert retried["finished_at"] is None
    kinds = [event["kind"] for event in client.get(f"{API}/jobs/{job['id']}/events").json()]
    assert kinds[-1] == "retried"


def test_retry_a_cancelled_job(client: TestClient) -> None:
    job = enqueue(client)
    client.post(f"{API}/jobs/{job['id']}/cancel")
    response = client.post(f"{API}/jobs/{job['id']}/retry")
    assert response.status_code == 200
    assert response.json()["status"] == "pending"


def test_retry_of_a_pending_or_completed_job_is_409_conflict(
    client: TestClient, runtime: Runtime
) -> None:
    done = enqueue(client)
    finish_jobs(runtime)
    pending = enqueue(client)
    assert_error(client.post(f"{API}/jobs/{pending['id']}/retry"), 409, "conflict")
    assert_error(client.post(f"{API}/jobs/{done['id']}/retry"), 409, "conflict")
    assert get_job(client, pending["id"])["status"] == "pending"
    assert get_job(client, done["id"])["status"] == "completed"


# --- the dead-letter queue --------------------------------------------------------------------


def test_dlq_list_and_get(client: TestClient, runtime: Runtime) -> None:
    assert client.get(f"{API}/dlq").json() == []
    job = enqueue(client, "diag.fail", payload={"fail_times": 9, "message": "boom"}, max_attempts=2)
    other = enqueue(client, "diag.fail", payload={"fail_times": 9}, max_attempts=1)
    finish_jobs(runtime)
    response = client.get(f"{API}/dlq")
    assert response.status_code == 200
    entries = response.json()
    assert sorted(entry["job_id"] for entry in entries) == [job["id"], other["id"]]
    # Newest first: `other` failed at its first attempt, `job` at its second (later).
    assert [entry["id"] for entry in entries] == sorted(
        (entry["id"] for entry in entries), reverse=True
    )
    assert [entry["job_id"] for entry in entries] == [job["id"], other["id"]]
    assert entries[0]["failed_at"] >= entries[1]["failed_at"]
    [entry] = [entry for entry in entries if entry["job_id"] == job["id"]]
    assert entry["job_type"] == "diag.fail"
    assert entry["payload"] == {"fail_times": 9, "message": "boom"}
    assert entry["attempts"] == 2
    assert entry["requeued_at"] is None
    assert "boom" in entry["last_error"]
    detail = client.get(f"{API}/dlq/{entry['id']}")
    assert detail.status_code == 200
    errors = detail.json()["errors"]
    assert [error["attempt"] for error in errors] == [1, 2]
    assert all("DeliberateFailureError" in (error["traceback"] or "") for error in errors)
    assert all("boom" in error["message"] for error in errors)
    assert client.get(f"{API}/dlq", params={"limit": 1}).json() == entries[:1]


def test_dlq_requeue_and_requeue_twice(client: TestClient, runtime: Runtime) -> None:
    job = enqueue(client, "diag.fail", payload={"fail_times": 9}, max_attempts=1)
    finish_jobs(runtime)
    [entry] = client.get(f"{API}/dlq").json()
    response = client.post(f"{API}/dlq/{entry['id']}/requeue")
    assert response.status_code == 200, response.text
    requeued = response.json()
    assert requeued["id"] == job["id"]
    assert requeued["status"] == "pending"
    assert requeued["attempts"] == 0
    assert client.get(f"{API}/dlq").json() == []
    [listed] = client.get(f"{API}/dlq", params={"include_requeued": True}).json()
    assert listed["id"] == entry["id"]
    assert listed["requeued_at"] is not None
    assert client.get(f"{API}/dlq/{entry['id']}").json()["requeued_at"] is not None
    assert_error(client.post(f"{API}/dlq/{entry['id']}/requeue"), 409, "conflict")


@pytest.mark.parametrize("entry_id", ["424242", *HUGE_IDS])
def test_unknown_dlq_entries_are_404(client: TestClient, entry_id: str) -> None:
    assert_error(client.get(f"{API}/dlq/{entry_id}"), 404, "not_found")
    assert_error(client.post(f"{API}/dlq/{entry_id}/requeue"), 404, "not_found")


def test_dlq_rejects_bad_parameters(client: TestClient) -> None:
    assert_error(client.get(f"{API}/dlq/abc"), 422, "invalid_request")
    assert_error(client.post(f"{API}/dlq/abc/requeue"), 422, "invalid_request")
    assert_error(client.get(f"{API}/dlq?limit=0"), 422, "invalid_request")
    assert_error(client.get(f"{API}/dlq?include_requeued=maybe"), 422, "invalid_request")
    assert_error(client.delete(f"{API}/dlq?older_than_days=-1"), 422, "invalid_request")
    assert_error(client.delete(f"{API}/dlq?older_than_days=36501"), 422, "invalid_request")
    assert_error(client.delete(f"{API}/dlq?older_than_days=soon"), 422, "invalid_request")


def test_dlq_purge(client: TestClient, runtime: Runtime) -> None:
    for _ in range(2):
        enqueue(client, "diag.fail", payload={"fail_times": 9}, max_attempts=1)
    finish_jobs(runtime)
    assert len(client.get(f"{API}/dlq").json()) == 2
    response = client.delete(f"{API}/dlq", params={"older_than_days": 1})
    assert response.status_code == 200
    assert response.json() == {"purged": 0}
    assert len(client.get(f"{API}/dlq").json()) == 2
    # Backdate one entry: it is now older than a day.
    with runtime.engine.begin() as connection:
        first_id = connection.execute(text("SELECT min(id) FROM dead_letter_jobs")).scalar_one()
        connection.execute(
            text("UPDATE dead_letter_jobs SET failed_at = :at WHERE id = :id"),
            {"at": runtime.clock() - timedelta(days=3), "id": first_id},
        )
    assert client.delete(f"{API}/dlq", params={"older_than_days": 2}).json() == {"purged": 1}
    assert [entry["id"] != first_id for entry in client.get(f"{API}/dlq").json()] == [True]
    assert client.delete(f"{API}/dlq").json() == {"purged": 1}
    assert client.get(f"{API}/dlq").json() == []
    assert client.delete(f"{API}/dlq").json() == {"purged": 0}


# --- GET /queue/stats and /workers --------------------------------------------------------------


def test_queue_stats(client: TestClient, runtime: Runtime) -> None:
    empty = client.get(f"{API}/queue/stats")
    assert empty.status_code == 200
    assert empty.headers["cache-control"] == "no-store"
    assert empty.json()["dead_letter"] == 0
    assert empty.json()["oldest_pending_age_seconds"] is None
    for _ in range(2):
        enqueue(client)
    enqueue(client, "diag.fail", payload={"fail_times": 9}, max_attempts=1)
    finish_jobs(runtime)
    enqueue(client, "diag.sleep")
    cancelled = enqueue(client, "diag.sleep")
    client.post(f"{API}/jobs/{cancelled['id']}/cancel")
    stats = client.get(f"{API}/queue/stats").json()
    counts = {status: count for status, count in stats["by_status"].items() if count}
    assert counts == {"completed": 2, "failed": 1, "pending": 1, "cancelled": 1}
    by_type = {
        job_type: {status: count for status, count in statuses.items() if count}
        for job_type, statuses in stats["by_type"].items()
    }
    assert by_type == {
        "diag.noop": {"completed": 2},
        "diag.fail": {"failed": 1},
        "diag.sleep": {"pending": 1, "cancelled": 1},
    }
    assert stats["dead_letter"] == 1
    assert stats["oldest_pending_age_seconds"] is not None
    assert 0 <= stats["oldest_pending_age_seconds"] < 60
    assert stats["workers_alive"] == 0  # the burst worker has stopped


def test_workers_lists_live_and_stopped_workers(client: TestClient, runtime: Runtime) -> None:
    assert client.get(f"{API}/workers").json() == []
    thread = WorkerThread(runtime).start()
    stopped = False
    try:
        job = enqueue(client, "diag.sleep", payload={"seconds": 30})
        wait_until(lambda: get_job(client, job["id"])["status"] == "running")
        response = client.get(f"{API}/workers")
        assert response.status_code == 200
        assert response.headers["cache-control"] == "no-store"
        [worker] = response.json()
        assert worker["id"] == thread.worker.id
        assert worker["alive"] is True
        assert worker["running_jobs"] == [job["id"]]
        assert worker["stopped_at"] is None
        assert worker["concurrency"] == 4
        assert "diag.sleep" in worker["job_types"]
        assert client.get(f"{API}/queue/stats").json()["workers_alive"] == 1
        thread.stop()
        stopped = True
    finally:
        if not stopped:
            thread.stop()
    [worker] = client.get(f"{API}/workers").json()
    assert worker["id"] == thread.worker.id
    assert worker["alive"] is False
    assert worker["stopped_at"] is not None
    assert worker["running_jobs"] == []
    assert client.get(f"{API}/queue/stats").json()["workers_alive"] == 0
    # Stopped workers are listed only within `dead_within_hours`.
    assert client.get(f"{API}/workers", params={"dead_within_hours": 0}).json() == []
    assert_error(client.get(f"{API}/workers?dead_within_hours=-1"), 422, "invalid_request")


# --- health, ready, metrics -------------------------------------------------------------------


def test_health(client: TestClient) -> None:
    response = client.get(f"{API}/health")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "scheduler": {"status": "none", "last_tick_at": None},
    }


def test_ready_on_a_migrated_database(client: TestClient, backend: str) -> None:
    response = client.get(f"{API}/ready")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert body["database"] == backend
    assert body["schema_revision"]


def test_ready_on_an_unmigrated_database_is_503_not_migrated(
    backend: str,
    make_client: Callable[..., TestClient],
    tmp_path: Any,
    request: pytest.FixtureRequest,
) -> None:
    if backend == "sqlite":
        path = tmp_path / "empty.db"
        path.touch()
        url = f"sqlite:///{path}"
    else:
        databases = request.getfixturevalue("postgres_databases")
        name = f"dominus_empty_{uuid.uuid4().hex[:12]}"
        url = databases.create(name)
        request.addfinalizer(lambda: databases.drop(name))
    client = make_client(database=url)
    response = client.get(f"{API}/ready")
    assert_error(response, 503, "not_migrated")
    assert "retry-after" in response.headers
    assert client.get(f"{API}/health").status_code == 200
    # The other endpoints answer 503 too (never a 500) until the database is migrated.
    for method, path in (
        ("GET", "/jobs"),
        ("GET", "/jobs/1"),
        ("POST", "/jobs"),
        ("GET", "/dlq"),
        ("GET", "/queue/stats"),
        ("GET", "/workers"),
        ("GET", "/metrics"),
    ):
        body = {"type": "diag.noop"} if method == "POST" else None
        response = client.request(method, f"{API}{path}", json=body)
        assert_error(response, 503)


def metric_samples(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get(f"{API}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.headers["cache-control"] == "no-store"
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def by_type(name: str, job_type: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return (name, (("type", job_type),))


def test_metrics(client: TestClient, runtime: Runtime) -> None:
    empty = metric_samples(client)
    assert empty[("dominus_dead_letter_entries", ())] == 0
    assert empty[("dominus_workers_alive", ())] == 0
    for _ in range(3):
        enqueue(client)
    enqueue(client, "diag.fail", payload={"fail_times": 9}, max_attempts=2)
    cancelled = enqueue(client, "diag.sleep")
    client.post(f"{API}/jobs/{cancelled['id']}/cancel")
    finish_jobs(runtime)

    families = {
        family.name: family
        for family in text_string_to_metric_families(client.get(f"{API}/metrics").text)
    }
    for name in (
        "dominus_jobs_enqueued",
        "dominus_jobs_completed",
        "dominus_job_attempts_failed",
        "dominus_job_attempts_reclaimed",
        "dominus_jobs_dead_lettered",
        "dominus_jobs_cancelled",
    ):
        assert families[name].type == "counter", name
    assert families["dominus_job_duration_seconds"].type == "histogram"
    assert families["dominus_jobs"].type == "gauge"

    samples = metric_samples(client)
    expected_counters = {
        ("dominus_jobs_enqueued_total", "diag.noop"): 3,
        ("dominus_jobs_enqueued_total", "diag.fail"): 1,
        ("dominus_jobs_enqueued_total", "diag.sleep"): 1,
        ("dominus_jobs_completed_total", "diag.noop"): 3,
        ("dominus_jobs_completed_total", "diag.fail"): 0,
        ("dominus_job_attempts_failed_total", "diag.fail"): 2,
        ("dominus_job_attempts_failed_total", "diag.noop"): 0,
        ("dominus_jobs_dead_lettered_total", "diag.fail"): 1,
        ("dominus_jobs_cancelled_total", "diag.sleep"): 1,
        ("dominus_job_attempts_reclaimed_total", "diag.noop"): 0,
    }
    for (name, job_type), value in expected_counters.items():
        assert samples.get(by_type(name, job_type), 0) == value, (name, job_type, samples)
    assert samples[by_type("dominus_job_duration_seconds_count", "diag.noop")] == 3
    assert samples[("dominus_job_duration_seconds_bucket", (("le", "+Inf"), ("type", "diag.noop")))]
    assert samples[by_type("dominus_job_duration_seconds_sum", "diag.noop")] >= 0
    assert samples[("dominus_jobs", (("status", "completed"), ("type", "diag.noop")))] == 3
    assert samples[("dominus_jobs", (("status", "failed"), ("type", "diag.fail")))] == 1
    assert samples[("dominus_dead_letter_entries", ())] == 1
    assert samples[("dominus_oldest_pending_job_age_seconds", ())] == 0

    # Counters never fall, even when the rows they counted are deleted (an operator's delete;
    # pruning is tested with the prune rules).
    counters = {key: value for key, value in samples.items() if key[0].endswith("_total")}
    ids = [job.id for job in runtime.store.list_jobs()]
    assert len(ids) == 5
    deleted = runtime.store.bulk(BulkAction.DELETE, ids, runtime.clock())
    assert sorted(deleted.done) == sorted(ids)
    after = metric_samples(client)
    for key, count in counters.items():
        assert after.get(key) == count, key
    assert after[by_type("dominus_job_duration_seconds_count", "diag.noop")] == 3
    assert after[("dominus_dead_letter_entries", ())] == 0
    assert not any(value for key, value in after.items() if key[0] == "dominus_jobs")


# --- errors outside the routes ----------------------------------------------------------------


@pytest.mark.parametrize("path", [f"{API}/nope", f"{API}/jobs/1/nope", f"{API}"])
def test_unknown_routes_are_404_in_the_error_shape(client: TestClient, path: str) -> None:
    assert_error(client.get(path), 404, "not_found")


def test_unknown_pages_outside_the_api_are_404_pages(client: TestClient) -> None:
    """Outside /api/v1 are the dashboard's pages (ADR 0023): an unknown one is an HTML 404."""
    response = client.get("/nope")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "not found" in response.text.lower()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/jobs"),
        ("PUT", "/jobs/1"),
        ("GET", "/jobs/1/cancel"),
        ("GET", "/jobs/1/retry"),
        ("POST", "/dlq"),
        ("GET", "/dlq/1/requeue"),
        ("POST", "/queue/stats"),
        ("POST", "/health"),
        ("DELETE", "/metrics"),
    ],
)
def test_wrong_methods_are_405_in_the_error_shape(
    client: TestClient, method: str, path: str
) -> None:
    response = client.request(method, f"{API}{path}")
    assert_error(response, 405, "method_not_allowed")
    assert response.headers.get("allow"), "a 405 must list the allowed methods"


def test_openapi_document_describes_every_endpoint(client: TestClient) -> None:
    response = client.get(f"{API}/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    expected = {
        f"{API}/jobs": {"get", "post"},
        f"{API}/jobs/bulk": {"post"},
        f"{API}/jobs/{{job_id}}": {"get"},
        f"{API}/jobs/{{job_id}}/events": {"get"},
        f"{API}/jobs/{{job_id}}/stream": {"get"},
        f"{API}/jobs/{{job_id}}/cancel": {"post"},
        f"{API}/jobs/{{job_id}}/retry": {"post"},
        f"{API}/runs": {"get", "post"},
        f"{API}/runs/{{run_id}}": {"get"},
        f"{API}/runs/{{run_id}}/job": {"get"},
        f"{API}/runs/{{run_id}}/candidates": {"get"},
        f"{API}/runs/{{run_id}}/candidates.csv": {"get"},
        f"{API}/runs/{{run_id}}/stream": {"get"},
        f"{API}/score": {"get"},
        f"{API}/portfolio": {"get", "post"},
        f"{API}/portfolio/rescore": {"post"},
        f"{API}/portfolio/import": {"post"},
        f"{API}/portfolio/{{domain}}": {"get", "patch", "delete"},
        f"{API}/portfolio/{{domain}}/sold": {"post"},
        f"{API}/portfolio/{{domain}}/drop": {"post"},
        f"{API}/outcomes": {"get", "post"},
        f"{API}/backtest/report": {"get"},
        f"{API}/backtest/report.png": {"get"},
        f"{API}/weights": {"get"},
        f"{API}/dlq": {"get", "delete"},
        f"{API}/dlq/{{entry_id}}": {"get"},
        f"{API}/dlq/{{entry_id}}/requeue": {"post"},
        f"{API}/queue/stats": {"get"},
        f"{API}/workers": {"get"},
        f"{API}/queues": {"get"},
        f"{API}/queues/{{name}}/pause": {"post"},
        f"{API}/queues/{{name}}/resume": {"post"},
        f"{API}/keys": {"get"},
        f"{API}/keys/{{key}}/resume": {"post"},
        f"{API}/schedules": {"get"},
        f"{API}/schedules/{{name}}/run": {"post"},
        f"{API}/schedules/{{name}}/enable": {"post"},
        f"{API}/schedules/{{name}}/disable": {"post"},
        f"{API}/watchlist": {"get", "post"},
        f"{API}/watchlist/{{domain}}": {"get", "delete"},
        f"{API}/alerts": {"get"},
        f"{API}/alerts/ack": {"post"},
        f"{API}/alerts/{{alert_id}}/ack": {"post"},
        f"{API}/health": {"get"},
        f"{API}/ready": {"get"},
        f"{API}/metrics": {"get"},
    }
    assert {path: set(methods) for path, methods in paths.items()} == expected


# --- strictness: what JSON says is what is stored ---------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("priority", False),
        ("priority", "5"),
        ("priority", 1.5),
        ("max_attempts", "3"),
        ("max_attempts", True),
        ("timeout_seconds", "30"),
        ("timeout_seconds", True),
        ("run_at", 1_700_000_000),
        ("run_at", "1700000000"),
        ("run_at", "2030-01-01"),
        ("dedupe_key", 5),
        ("payload", "{}"),
    ],
)
def test_options_are_not_coerced_from_other_json_types(
    client: TestClient, runtime: Runtime, field: str, value: Any
) -> None:
    response = client.post(f"{API}/jobs", json={"type": "diag.noop", field: value})
    error = assert_error(response, 422, "invalid_request")
    assert field in error["message"]
    assert job_count(runtime) == 0


def test_integral_numbers_are_integers(client: TestClient) -> None:
    """JSON does not tell 3 from 3.0; neither does the API."""
    job = enqueue(client, "diag.fail", payload={"fail_times": 2.0}, priority=4.0, max_attempts=3.0)
    assert job["payload"]["fail_times"] == 2
    assert (job["priority"], job["max_attempts"]) == (4, 3)


@pytest.mark.parametrize(
    "payload", [{"fail_times": "2"}, {"fail_times": True}, {"fail_times": 2.5}, {"message": 5}]
)
def test_payload_fields_are_not_coerced(
    client: TestClient, runtime: Runtime, payload: dict[str, Any]
) -> None:
    response = client.post(f"{API}/jobs", json={"type": "diag.fail", "payload": payload})
    assert_error(response, 422, "invalid_payload")
    assert job_count(runtime) == 0


def test_nul_characters_are_refused_on_every_backend(client: TestClient, runtime: Runtime) -> None:
    """PostgreSQL cannot store NUL in text or JSONB; SQLite could, but a job must not be storable
    on one backend and not on the other."""
    response = client.post(
        f"{API}/jobs", json={"type": "diag.fail", "payload": {"message": "a\x00b"}}
    )
    assert_error(response, 422, "invalid_payload")
    response = client.post(f"{API}/jobs", json={"type": "diag.noop", "dedupe_key": "a\x00b"})
    assert_error(response, 422, "invalid_option")
    assert job_count(runtime) == 0
    enqueue(client)
    response = client.get(f"{API}/jobs", params={"type": "diag.noop\x00"})
    assert response.status_code == 200
    assert response.json()["items"] == []


@pytest.mark.parametrize("value", ["0.5", "1700000000", "2030-01-01"])
def test_time_filters_must_be_iso_date_times(client: TestClient, value: str) -> None:
    assert_error(client.get(f"{API}/jobs", params={"created_before": value}), 422)


def test_a_405_lists_every_method_of_the_path(client: TestClient) -> None:
    response = client.put(f"{API}/dlq")
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, DELETE"
    response = client.patch(f"{API}/jobs")
    assert response.headers["allow"] == "GET, POST"


def test_the_schema_lists_each_job_type_with_its_payload(client: TestClient) -> None:
    schemas = client.get(f"{API}/openapi.json").json()["components"]["schemas"]
    alternatives = [ref["$ref"].rsplit("/", 1)[1] for ref in schemas["EnqueueBody"]["oneOf"]]
    types = {schemas[name]["properties"]["type"]["const"]: name for name in alternatives}
    assert {"diag.noop", "diag.sleep", "diag.fail"} <= set(types)
    sleep_payload = schemas[types["diag.sleep"]]["properties"]["payload"]
    assert sleep_payload["properties"]["seconds"]["type"] == "number"
    assert sleep_payload["additionalProperties"] is False
