"""The Dead letters page as operators expect it (ADR 0054): filtered by type and age, every
entry selectable at once, each row requeued or deleted on its own (a delete after a page that
states the count), and a failed job's page linking its entry. Through the app, on SQLite."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from dominus.jobs.sql.tables import dead_letter_jobs
from tests.support.api import API, enqueue, finish_jobs, get_job, runtime_of
from tests.support.dashboard import csrf_of, post

pytestmark = pytest.mark.backends("sqlite")


def entries_listed(html: str) -> list[int]:
    return sorted(int(found) for found in re.findall(r'<tr data-entry="(\d+)"', html))


def dead_letters(client: TestClient, count: int) -> list[dict[str, Any]]:
    for _ in range(count):
        enqueue(client, "diag.fail", payload={"fail_times": 1}, max_attempts=1)
    finish_jobs(runtime_of(client))
    listed: list[dict[str, Any]] = client.get(f"{API}/dlq").json()
    return sorted(listed, key=lambda entry: entry["id"])


def test_the_list_filters_by_type_and_age(client: TestClient) -> None:
    old, recent = dead_letters(client, 2)
    runtime = runtime_of(client)
    with runtime.engine.begin() as connection:  # one failed ten days ago
        connection.execute(
            update(dead_letter_jobs)
            .where(dead_letter_jobs.c.id == old["id"])
            .values(failed_at=runtime.clock() - timedelta(days=10))
        )
    assert entries_listed(client.get("/dead-letters?age=24h").text) == [recent["id"]]
    assert entries_listed(client.get("/dead-letters?age=older-7d").text) == [old["id"]]
    assert entries_listed(client.get("/dead-letters?type=diag.fail").text) == [
        old["id"],
        recent["id"],
    ]
    nothing = client.get("/dead-letters?type=diag.noop").text
    assert entries_listed(nothing) == [] and "No dead-letter entry matches." in nothing
    assert client.get("/dead-letters?age=forever").status_code == 422


def test_select_all_ticks_every_open_entry(client: TestClient) -> None:
    dead_letters(client, 3)
    page = client.get("/dead-letters?select=all").text
    assert len(re.findall(r'name="entry" value="\d+"[^>]*checked', page)) == 3
    assert 'data-select-all="entry"' in page


def test_a_row_is_requeued_or_deleted_on_its_own(client: TestClient) -> None:
    first, second, third = dead_letters(client, 3)
    token = csrf_of(client.get("/dead-letters").text)
    page = client.get("/dead-letters").text
    assert f'formaction="/dead-letters/{first["id"]}/requeue"' in page
    requeued = post(client, f"/dead-letters/{first['id']}/requeue", token)
    assert requeued.headers["location"] == f"/jobs/{first['job_id']}?notice=requeued"
    # One row's Delete asks first, naming the one entry, and deletes nothing yet.
    confirm = post(client, "/dead-letters/delete", token, only=second["id"], entry=third["id"])
    assert confirm.status_code == 200
    assert "<h1>Delete 1 dead-letter entry?</h1>" in confirm.text
    assert len(client.get(f"{API}/dlq").json()) == 2
    done = post(client, "/dead-letters/delete", token, entry=second["id"], confirm="yes")
    assert done.headers["location"] == "/dead-letters?notice=deleted-many"
    assert [entry["id"] for entry in client.get(f"{API}/dlq").json()] == [third["id"]]
    assert get_job(client, second["job_id"])["status"] == "failed"  # the job stays
    many = client.post(
        "/dead-letters/delete",
        data={"csrf_token": token, "entry": [third["id"], first["id"]]},
    )
    assert "<h1>Delete 2 dead-letter entries?</h1>" in many.text
    refused = post(client, "/dead-letters/delete", None, entry=third["id"], confirm="yes")
    assert refused.status_code == 403
    assert post(client, "/dead-letters/delete", token, entry="x", confirm="yes").status_code == 400
    assert [entry["id"] for entry in client.get(f"{API}/dlq").json()] == [third["id"]]


def test_a_failed_jobs_page_links_its_dead_letter_entry(client: TestClient) -> None:
    [entry] = dead_letters(client, 1)
    page = client.get(f"/jobs/{entry['job_id']}").text
    assert f'<a href="/dead-letters/{entry["id"]}">entry {entry["id"]}</a>' in page
    assert "It is in the dead-letter queue" in page
    done = enqueue(client, "diag.noop")
    finish_jobs(runtime_of(client))
    assert "dead-letter queue" not in client.get(f"/jobs/{done['id']}").text
