"""The queue's latency on every reader: `/queue/stats` (`latency_seconds`), the Prometheus
gauge `dominus_queue_latency_seconds` and the dashboard's overview card. A job scheduled four
hours ahead is pending but not late: it adds no latency (the old "oldest pending" age, since
creation, still counts it)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from dominus.runtime import Runtime
from tests.support.api import API, enqueue

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def gauges(client: TestClient) -> dict[str, float]:
    response = client.get(f"{API}/metrics")
    assert response.status_code == 200
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if not sample.labels
    }


def test_a_job_scheduled_ahead_is_not_late(client: TestClient, runtime: Runtime) -> None:
    ahead = (runtime.clock() + timedelta(hours=4)).isoformat()
    enqueue(client, "diag.noop", run_at=ahead)
    stats = client.get(f"{API}/queue/stats").json()
    assert stats["by_status"]["pending"] == 1
    assert stats["latency_seconds"] is None
    assert stats["oldest_pending_age_seconds"] is not None
    assert gauges(client)["dominus_queue_latency_seconds"] == 0
    card = re.search(r"latency \(oldest due job\)</span><span class=\"value\">([^<]*)<",
                     client.get("/").text)  # fmt: skip
    assert card is not None and card.group(1) == "—"


def test_a_due_job_is_late_on_every_reader(client: TestClient) -> None:
    enqueue(client, "diag.noop")
    stats = client.get(f"{API}/queue/stats").json()
    assert stats["latency_seconds"] is not None and 0 <= stats["latency_seconds"] < 60
    assert "dominus_queue_latency_seconds" in gauges(client)
    assert "latency (oldest due job)" in client.get("/").text
