"""The Prometheus configuration the monitoring page shows names metrics that exist: every
`dominus_*` name in its YAML blocks is a sample of a live `/metrics` answer."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from dominus.runtime import Runtime
from tests.support.api import API, enqueue, finish_jobs
from tests.support.transcripts import ROOT

PAGE = ROOT / "docs" / "operations" / "monitoring.md"


def names_in_the_yaml_blocks() -> set[str]:
    blocks = re.findall(r"^```yaml\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.M | re.S)
    return {name for block in blocks for name in re.findall(r"\bdominus_[a-z_]+", block)}


def test_the_alert_rules_name_metrics_the_server_exposes(
    client: TestClient, runtime: Runtime
) -> None:
    enqueue(client, "diag.noop")  # a job type, so the per-type counters have samples
    finish_jobs(runtime)
    response = client.get(f"{API}/metrics")
    assert response.status_code == 200
    exposed = {
        sample.name
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }
    named = names_in_the_yaml_blocks()
    assert {"dominus_queue_latency_seconds", "dominus_jobs_dead_lettered_total"} <= named
    assert named - exposed == set()
