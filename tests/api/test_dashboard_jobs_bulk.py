"""The Jobs page as operators expect it (ADR 0054): the pending jobs told apart (due,
scheduled, retrying), run-at, attempts and run-time columns, a type choice list, a search in
payloads and errors, a live list, and bulk retry / cancel / delete over the ticked jobs or the
whole filter, each after a page that states the count. Through the app, on SQLite."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from dominus.jobs.model import Failed
from dominus.runtime import Runtime
from tests.support.api import API, enqueue, finish_jobs, get_job, runtime_of
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite")


def token_of(client: TestClient) -> str:
    return csrf_of(client.get("/jobs").text)


def listed_ids(html: str) -> list[int]:
    return sorted(int(found) for found in re.findall(r'<tr data-job="(\d+)"', html))


def retrying_job(client: TestClient, runtime: Runtime) -> int:
    """A job whose first attempt failed, waiting an hour for its second."""
    job = enqueue(client, "diag.noop")
    now = runtime.clock()
    [claimed] = runtime.store.claim("w-test", ["diag.noop"], 1, now)
    assert claimed.id == job["id"]
    failed = Failed(claimed.claim, error="upstream timed out", retry_at=now + timedelta(hours=1))
    runtime.store.settle([failed], now)
    return int(job["id"])


def test_pending_jobs_are_listed_as_due_scheduled_or_retrying(client: TestClient) -> None:
    runtime = runtime_of(client)
    retrying = retrying_job(client, runtime)
    later = (runtime.clock() + timedelta(hours=3)).isoformat()
    scheduled = enqueue(client, "diag.noop", run_at=later)["id"]
    due = enqueue(client, "diag.noop")["id"]
    assert listed_ids(client.get("/jobs?status=due").text) == [due]
    assert listed_ids(client.get("/jobs?status=scheduled").text) == [scheduled]
    page = client.get("/jobs?status=retrying").text
    assert listed_ids(page) == [retrying]
    assert "1/3" in page  # attempts
    assert "in 59 min" in page or "in 1 h" in page  # when it runs again
    assert listed_ids(client.get("/jobs?status=pending").text) == [retrying, scheduled, due]
    everything = client.get("/jobs").text
    for column in ("run at", "attempts", "run time"):
        assert f'<th scope="col" class="num">{column}</th>' in everything or (
            f'<th scope="col">{column}</th>' in everything
        )
    assert client.get("/jobs?status=later").status_code == 422


def test_the_type_filter_offers_the_registered_types(client: TestClient) -> None:
    page = client.get("/jobs").text
    type_select = page.split('id="type"')[1].split("</select>")[0]
    choices = re.findall(r'<option value="([^"]+)"', type_select)
    assert "diag.noop" in choices and "diag.fail" in choices  # registered, no job yet
    assert "PORTFOLIO_RESCORE" in choices


def test_the_search_reads_payloads_and_errors_with_wildcards_taken_literally(
    client: TestClient,
) -> None:
    runtime = runtime_of(client)
    later = "2999-01-01T00:00:00Z"
    wanted = enqueue(client, "diag.fail", payload={"message": "100%_sure"}, run_at=later)["id"]
    enqueue(client, "diag.fail", payload={"message": "1000 sure"}, run_at=later)
    retrying = retrying_job(client, runtime)
    assert listed_ids(client.get("/jobs", params={"q": "100%_"}).text) == [wanted]
    assert listed_ids(client.get("/jobs", params={"q": "0%"}).text) == [wanted]
    assert listed_ids(client.get("/jobs", params={"q": "TIMED OUT"}).text) == [retrying]
    assert client.get("/jobs", params={"q": "x" * 201}).status_code == 422


def test_bulk_retry_of_ticked_jobs_confirms_the_count_then_retries(client: TestClient) -> None:
    runtime = runtime_of(client)
    failed = [enqueue(client, "diag.fail", max_attempts=1)["id"] for _ in range(2)]
    finish_jobs(runtime)
    pending = enqueue(client, "diag.sleep", payload={"seconds": 60}, run_at="2999-01-01T00:00:00Z")
    token = token_of(client)
    confirm = client.post(
        "/jobs/bulk",
        data={"csrf_token": token, "action": "retry", "job": [*failed, pending["id"]]},
    )
    assert confirm.status_code == 200, confirm.text
    assert "<h1>Retry 2 jobs?</h1>" in confirm.text
    assert f"Job {pending['id']}</a>: job {pending['id']} is pending" in confirm.text
    assert all(get_job(client, job_id)["status"] == "failed" for job_id in failed)  # not yet
    ids = re.search(r'name="ids" value="([0-9,]+)"', confirm.text)
    assert ids and ids.group(1) == ",".join(str(job_id) for job_id in failed)
    done = post(client, "/jobs/bulk", token, action="retry", ids=ids.group(1), confirm="yes")
    assert done.status_code == 303
    assert done.headers["location"].startswith("/jobs?notice=bulk&action=retry&done=2&skipped=0")
    assert all(get_job(client, job_id)["status"] == "pending" for job_id in failed)
    assert "2 jobs retried." in client.get(done.headers["location"]).text


def test_bulk_over_the_filter_states_the_count_and_what_it_leaves(client: TestClient) -> None:
    for _ in range(3):
        enqueue(client, "diag.noop", run_at="2999-01-01T00:00:00Z")
    other = enqueue(client, "diag.sleep", payload={"seconds": 1}, run_at="2999-01-01T00:00:00Z")
    token = token_of(client)
    confirm = client.post(
        "/jobs/bulk?scope=filter",
        data={"csrf_token": token, "action": "cancel", "type": "diag.noop", "status": "scheduled"},
    )
    assert "<h1>Cancel 3 jobs?</h1>" in confirm.text
    ids = re.search(r'name="ids" value="([0-9,]+)"', confirm.text)
    assert ids
    done = post(
        client,
        "/jobs/bulk",
        token,
        action="cancel",
        ids=ids.group(1),
        confirm="yes",
        type="diag.noop",
        status="scheduled",
    )
    assert done.headers["location"].startswith("/jobs?status=scheduled&type=diag.noop&notice=bulk")
    statuses = {job["id"]: job["status"] for job in client.get(f"{API}/jobs").json()["items"]}
    assert sorted(statuses.values()) == ["cancelled", "cancelled", "cancelled", "pending"]
    assert statuses[other["id"]] == "pending"
    # Retrying cancelled jobs of another filter: none failed, so nothing to do, and it says so.
    none = client.post(
        "/jobs/bulk?scope=filter", data={"csrf_token": token, "action": "retry", "status": "due"}
    )
    assert none.status_code == 200
    assert "<h1>No job to retry</h1>" in none.text


def test_a_running_job_is_never_deleted_and_the_page_says_cancel_it(client: TestClient) -> None:
    runtime = runtime_of(client)
    sleeping = enqueue(client, "diag.sleep", payload={"seconds": 60})
    [running] = runtime.store.claim("w-test", ["diag.sleep"], 1, runtime.clock())
    assert running.id == sleeping["id"]
    finished = enqueue(client, "diag.noop", run_at="2999-01-01T00:00:00Z")
    token = token_of(client)
    refused = client.post(
        "/jobs/bulk", data={"csrf_token": token, "action": "delete", "job": [running.id]}
    )
    assert refused.status_code == 409
    assert "Running jobs cannot be deleted" in refused.text
    assert "Cancel them instead" in refused.text
    mixed = client.post(
        "/jobs/bulk",
        data={"csrf_token": token, "action": "delete", "job": [running.id, finished["id"]]},
    )
    assert "<h1>Delete 1 job?</h1>" in mixed.text
    ids = re.search(r'name="ids" value="([0-9,]+)"', mixed.text)
    assert ids and ids.group(1) == str(finished["id"])
    post(client, "/jobs/bulk", token, action="delete", ids=ids.group(1), confirm="yes")
    assert client.get(f"{API}/jobs/{finished['id']}").status_code == 404
    assert get_job(client, running.id)["status"] == "running"


def test_bulk_posts_need_the_csrf_token_and_a_known_action(client: TestClient) -> None:
    job = enqueue(client, "diag.noop", run_at="2999-01-01T00:00:00Z")
    for token in (None, "0" * 64):
        refused = post(
            client, "/jobs/bulk", token, action="delete", ids=str(job["id"]), confirm="yes"
        )
        assert refused.status_code == 403
    assert get_job(client, job["id"])["status"] == "pending"
    token = token_of(client)
    assert post(client, "/jobs/bulk", token, action="explode", job=job["id"]).status_code == 422
    assert post(client, "/jobs/bulk", token, action="cancel", job="1e3").status_code == 400
    nothing = post(client, "/jobs/bulk", token, action="cancel")
    assert nothing.status_code == 303 and "nothing-selected" in nothing.headers["location"]
    too_many = ",".join(str(n) for n in range(1, 1002))
    capped = post(client, "/jobs/bulk", token, action="cancel", ids=too_many, confirm="yes")
    assert capped.status_code == 422
    assert get_job(client, job["id"])["status"] == "pending"


def test_select_all_on_the_page_ticks_every_row_and_the_list_streams_live(
    client: TestClient,
) -> None:
    jobs = [enqueue(client, "diag.noop", run_at="2999-01-01T00:00:00Z")["id"] for _ in range(2)]
    page = client.get("/jobs?select=page").text
    assert len(re.findall(r'name="job" value="\d+"[^>]*checked', page)) == 2
    assert 'sse-connect="/live/jobs"' in page and "data-hold-while-selected" in page
    with client.stream("GET", "/live/jobs?status=scheduled") as stream:
        assert stream.status_code == 200
        lines = []
        for line in stream.iter_lines():
            lines.append(line)
            if line == "" and len(lines) > 1:
                break
    event = "\n".join(lines)
    assert "event: jobs" in event
    assert all(f'data-job="{job_id}"' in event for job_id in jobs)
