"""The History page (ADR 0054, 0060): per job type, jobs completed, attempts failed, jobs
dead-lettered and run times over 24 hours and 7 days, from the counters' hourly history, drawn
as bars without scripts, beside the counters' totals since the database began; pruning the
finished jobs leaves it as it was. Through the app, on SQLite."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from dominus.maintenance.prune import prune
from dominus.maintenance.prune_rules import Retention
from dominus.schema.tables import job_queue
from tests.support.api import enqueue, finish_jobs, runtime_of

pytestmark = pytest.mark.backends("sqlite")


def row_of(html: str, job_type: str) -> list[str]:
    found = re.search(rf'<tr data-type="{re.escape(job_type)}">(.*?)</tr>', html, re.S)
    assert found, f"no row for {job_type}"
    return re.findall(r'<td class="num">([^<]*)</td>', found.group(1))


def test_history_counts_each_type_over_24_hours_and_7_days(client: TestClient) -> None:
    for _ in range(3):
        enqueue(client, "diag.noop")
    enqueue(client, "diag.fail", payload={"fail_times": 1}, max_attempts=2)  # fails, then passes
    finish_jobs(runtime_of(client))
    for window in ("24h", "7d"):
        page = client.get(f"/history?window={window}")
        assert page.status_code == 200
        html = page.text
        assert row_of(html, "diag.noop")[:4] == ["3", "0", "0.0 %", "0"]
        assert row_of(html, "diag.fail")[:4] == ["1", "1", "50.0 %", "0"]
        assert row_of(html, "diag.noop")[5] == "3"  # the counters' total
        assert row_of(html, "diag.fail")[5:7] == ["1", "1"]
        bars = "hour" if window == "24h" else "day"
        assert f"Jobs completed and attempts failed per {bars}" in html
        assert len(re.findall(r"<g><title>", html)) == (24 if window == "24h" else 7)
        assert "<script" not in html.split("<main")[1]  # drawn by the page alone
    one = client.get("/history?window=24h&type=diag.fail").text
    assert "1 jobs completed, 1 attempts failed (failure rate 50.0 %)" in one
    assert client.get("/history?window=1y").status_code == 422
    assert 'href="/history"' in client.get("/").text  # in the navigation


def test_history_outlives_the_pruned_jobs(client: TestClient) -> None:
    for _ in range(2):
        enqueue(client, "diag.noop")
    enqueue(client, "diag.fail", payload={"fail_times": 5}, max_attempts=1)  # dead-lettered
    runtime = runtime_of(client)
    finish_jobs(runtime)
    before = {window: client.get(f"/history?window={window}").text for window in ("24h", "7d")}
    # A prune a day later with a retention of one day: the jobs and the dead letter go.
    a_day_later = runtime.clock() + timedelta(days=1, minutes=1)
    report = prune(runtime.engine, Retention(1, 1, 1), a_day_later, batch_size=100)
    assert report.counts["job_queue"] == 3 and report.counts["dead_letter_jobs"] == 1
    with runtime.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(job_queue)).scalar() == 0
    for window, html in before.items():
        after = client.get(f"/history?window={window}").text
        assert row_of(after, "diag.noop")[:4] == row_of(html, "diag.noop")[:4]
        assert row_of(after, "diag.noop")[:3] == ["2", "0", "0.0 %"]
        assert row_of(after, "diag.fail")[:4] == ["0", "1", "100.0 %", "1"]
