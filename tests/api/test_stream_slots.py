"""The per-process cap on event streams, in process on both backends: 429 `too_many_streams`
before anything is streamed, and the slot given back however a stream ends. (The real-server
side, with clients that go away, is tests/api/test_stream_load.py.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.api.stream_limits import StreamLimits
from dominus.jobs.model import Job
from tests.support.api import API, assert_error, enqueue, runtime_of, sse_text_events

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def stream_limits(client: TestClient) -> StreamLimits:
    limits: StreamLimits = client.app.state.services.streams  # type: ignore[attr-defined]
    return limits


def finished_job(client: TestClient) -> int:
    job_id: int = enqueue(client)["id"]
    assert client.post(f"{API}/jobs/{job_id}/cancel").status_code == 200
    return job_id


def started_run(client: TestClient) -> int:
    response = client.post(f"{API}/runs", json={"keywords": ["lumen"]})
    assert response.status_code == 202, response.text
    run_id: int = response.json()["run_id"]
    return run_id


@pytest.mark.parametrize("resource", ["job", "run"])
def test_a_stream_over_the_cap_is_refused_before_streaming(
    backend: str, make_client: Callable[..., TestClient], resource: str
) -> None:
    client = make_client(DOMINUS_MAX_STREAMS=1)
    path = (
        f"{API}/jobs/{finished_job(client)}/stream"
        if resource == "job"
        else f"{API}/runs/{started_run(client)}/stream"
    )
    limits = stream_limits(client)
    assert limits.try_open()  # another client holds the only slot

    refused = client.get(path)
    error = assert_error(refused, 429, "too_many_streams")
    assert "DOMINUS_MAX_STREAMS" in error["message"]
    assert int(refused.headers["retry-after"]) > 0
    assert limits.open_streams == 1
    # Not found is still not found: the cap applies to streams that would start.
    assert_error(client.get(f"{API}/{resource}s/999999/stream"), 404, "not_found")
    limits.close()


def test_a_stream_that_ends_gives_its_slot_back(
    backend: str, make_client: Callable[..., TestClient]
) -> None:
    client = make_client(DOMINUS_MAX_STREAMS=1)
    job_id = finished_job(client)
    for _ in range(3):  # one slot, used again and again
        response = client.get(f"{API}/jobs/{job_id}/stream")
        assert response.status_code == 200, response.text
        assert [name for name, _ in sse_text_events(response.text)] == ["job", "end"]
        assert stream_limits(client).open_streams == 0


def test_a_stream_that_fails_gives_its_slot_back(
    backend: str, make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client(DOMINUS_MAX_STREAMS=1)
    job_id = enqueue(client)["id"]  # pending: the stream rereads it
    store = runtime_of(client).store
    real_get_job = store.get_job
    calls: list[int] = []

    def get_job_then_fail(wanted: int) -> Job:
        calls.append(wanted)
        if len(calls) > 1:
            raise RuntimeError("a bug in a reread")
        return real_get_job(wanted)

    monkeypatch.setattr(store, "get_job", get_job_then_fail)
    response: Any = client.get(f"{API}/jobs/{job_id}/stream")
    assert response.status_code == 200  # the failure came after the stream had started
    assert len(calls) == 2
    assert stream_limits(client).open_streams == 0
