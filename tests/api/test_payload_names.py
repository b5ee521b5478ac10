"""Job payloads name their options in snake_case and still take the camelCase names the first
releases used (`dryRun`, `minSampleSize`, `runId`): through `JobQueue.enqueue_job` and through
`POST /api/v1/jobs`, a payload is stored with the snake_case names whichever spelling it came
with; both spellings at once are refused; the schema offers the snake_case names."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.errors import InvalidPayloadError
from dominus.pipeline.model import PIPELINE_RUN
from tests.support.api import API, assert_error, runtime_of

# (job type, a payload with the old camelCase name, the payload as it is stored)
CAMEL_CASE_PAYLOADS = [
    ("WATCHLIST_POLL", {"dryRun": True}, {"dry_run": True}),
    ("WEIGHT_TUNE", {"dryRun": False}, {"dry_run": False}),
    ("BACKTEST_BUILD", {"minSampleSize": 7}, {"min_sample_size": 7}),
]
SNAKE_CASE_PAYLOADS = [(job_type, stored, stored) for job_type, _, stored in CAMEL_CASE_PAYLOADS]


@pytest.mark.parametrize(
    ("job_type", "sent", "stored"),
    CAMEL_CASE_PAYLOADS + SNAKE_CASE_PAYLOADS,
    ids=str,
)
def test_a_payload_is_stored_with_snake_case_names_whichever_spelling_came(
    client: TestClient, job_type: str, sent: dict[str, Any], stored: dict[str, Any]
) -> None:
    runtime = runtime_of(client)
    queued = runtime.queue().enqueue_job(job_type, sent)
    assert runtime.store.get_job(queued.job_id).payload == stored

    response = client.post(f"{API}/jobs", json={"type": job_type, "payload": sent})
    assert response.status_code == 202, response.text
    assert response.json()["payload"] == stored


def test_pipeline_run_takes_its_run_id_in_either_spelling(client: TestClient) -> None:
    queue = runtime_of(client).queue()
    for sent in ({"runId": 41}, {"run_id": 42}):
        queued = queue.enqueue_job(PIPELINE_RUN, sent, internal=True)
        assert runtime_of(client).store.get_job(queued.job_id).payload == {
            "run_id": next(iter(sent.values()))
        }


@pytest.mark.parametrize("job_type", ["WATCHLIST_POLL", "WEIGHT_TUNE", "PRUNE"])
def test_both_spellings_of_one_option_are_refused(client: TestClient, job_type: str) -> None:
    payload = {"dry_run": True, "dryRun": False}
    with pytest.raises(InvalidPayloadError, match="dryRun"):
        runtime_of(client).queue().enqueue_job(job_type, payload)
    response = client.post(f"{API}/jobs", json={"type": job_type, "payload": payload})
    assert_error(response, 422, "invalid_payload")


def test_the_schema_names_the_options_in_snake_case(client: TestClient) -> None:
    schemas = client.get(f"{API}/openapi.json").json()["components"]["schemas"]
    alternatives = [ref["$ref"].rsplit("/", 1)[1] for ref in schemas["EnqueueBody"]["oneOf"]]
    payloads = {
        schemas[name]["properties"]["type"]["const"]: schemas[name]["properties"]["payload"]
        for name in alternatives
    }
    for job_type in ("WATCHLIST_POLL", "WEIGHT_TUNE", "PRUNE"):
        assert "dry_run" in payloads[job_type]["properties"], job_type
    assert "min_sample_size" in payloads["BACKTEST_BUILD"]["properties"]
    for payload in payloads.values():
        assert not {"dryRun", "minSampleSize", "runId"} & set(payload.get("properties", {}))
