"""Helpers of the REST API tests (their fixtures are in tests/api/conftest.py):

- `api_settings`/`local_client`: an app on a test's database, talked to as a local program;
- `finish_jobs(runtime)` runs a real worker in burst mode until nothing is due, `WorkerThread`
  one in the background;
- `assert_error(response, status, code)` checks the one error shape; `sse_events` decodes a
  text/event-stream.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dominus.config import Settings, load_settings
from dominus.jobs import HandlerRegistry, JobQueue, RetryPolicy, Worker, WorkerConfig
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.runtime import Runtime

API = "/api/v1"
TOKEN = "s3cret-t0ken"
LOCAL_BASE_URL = "http://127.0.0.1"
REQUESTED_BY_HEADER = "X-Requested-By"  # any value lets a bodiless POST or DELETE through


def api_settings(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "_env_file": None,
        "DATABASE_URL": database_url,
        "DOMINUS_DIAGNOSTIC_JOBS": True,
    }
    values.update(overrides)
    return load_settings(**values)


def local_client(app: FastAPI, **kwargs: Any) -> TestClient:
    """A TestClient as a local program talks to the API: to 127.0.0.1 (the app answers to
    loopback names only, ADR 0008), with `X-Requested-By` so bodiless POSTs and DELETEs pass."""
    kwargs.setdefault("headers", {REQUESTED_BY_HEADER: "dominus-tests"})
    return TestClient(app, base_url=LOCAL_BASE_URL, raise_server_exceptions=False, **kwargs)


def runtime_of(client: TestClient) -> Runtime:
    runtime: Runtime = client.app.state.services.runtime  # type: ignore[attr-defined]
    return runtime


def diag_registry() -> HandlerRegistry:
    return register_diagnostic_jobs(HandlerRegistry())


def make_worker(runtime: Runtime, **config: Any) -> Worker:
    """A real worker on the app's store and clock: quick polls, retries without backoff."""
    values: dict[str, Any] = {
        "concurrency": 4,
        "poll_interval_seconds": 0.05,
        "heartbeat_interval_seconds": 0.5,
        "max_running_age_seconds": 60,
        "cancel_check_interval_seconds": 0.05,
        "graceful_shutdown_timeout_seconds": 0.2,
        "abort_grace_seconds": 1.0,
        "progress_interval_seconds": 0.1,
        "retry_policy": RetryPolicy(base_seconds=0, max_seconds=0, jitter=0),
    }
    values.update(config)
    registry = runtime.registry(diagnostic_jobs=True)
    return Worker(runtime.store, registry, WorkerConfig(**values), clock=runtime.clock)


def finish_jobs(runtime: Runtime) -> Worker:
    """Run a worker until nothing is due, then stop it (it is recorded as stopped)."""
    worker = make_worker(runtime, burst=True)
    thread = threading.Thread(target=worker.run, name="test-burst-worker", daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "the burst worker did not finish within 30 s"
    return worker


class WorkerThread:
    """A worker running `run()` in a background thread until `stop()`."""

    def __init__(self, runtime: Runtime, **config: Any) -> None:
        self.worker = make_worker(runtime, **config)
        self.thread = threading.Thread(target=self.worker.run, name="test-worker", daemon=True)

    def start(self) -> WorkerThread:
        self.thread.start()
        return self

    def stop(self, timeout: float = 15) -> None:
        self.worker.request_shutdown()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the worker thread did not stop"


def assert_error(response: httpx.Response, status: int, code: str | None = None) -> dict[str, str]:
    """The response is `status` with exactly `{"error": {"code": str, "message": str}}`."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message"}, body
    assert isinstance(error["code"], str) and error["code"], body
    assert isinstance(error["message"], str) and error["message"], body
    if code is not None:
        assert error["code"] == code, body
    return dict(error)


def enqueue(client: TestClient, job_type: str = "diag.noop", **fields: Any) -> dict[str, Any]:
    """POST /jobs, insisting on 202; returns the job document."""
    response = client.post(f"{API}/jobs", json={"type": job_type, **fields})
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    return job


def get_job(client: TestClient, job_id: int) -> dict[str, Any]:
    response = client.get(f"{API}/jobs/{job_id}")
    assert response.status_code == 200, response.text
    job: dict[str, Any] = response.json()
    return job


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """(event name, decoded data) as each event of a text/event-stream arrives."""
    name, data = "message", list[str]()
    for line in lines:
        if not line:
            if data:
                yield name, json.loads("\n".join(data))
            name, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)


def sse_text_events(body: str) -> list[tuple[str, Any]]:
    """The events of a whole text/event-stream body."""
    return list(sse_events(iter([*body.replace("\r\n", "\n").split("\n"), ""])))


def prepare(client: TestClient) -> dict[str, int]:
    """A pending job, a cancelled one, a finished one and a dead-letter entry, written directly
    (not through the API under test)."""
    runtime = runtime_of(client)
    queue = JobQueue(runtime.store, diag_registry(), clock=runtime.clock)
    failing = queue.enqueue_job("diag.fail", {"fail_times": 9}, max_attempts=1).job_id
    finished = queue.enqueue_job("diag.noop").job_id
    finish_jobs(runtime)
    pending = queue.enqueue_job("diag.noop").job_id
    cancelled = queue.enqueue_job("diag.noop").job_id
    queue.cancel(cancelled)
    [entry] = runtime.store.list_dead_letters()
    assert entry.job_id == failing
    return {"pending": pending, "cancelled": cancelled, "finished": finished, "entry": entry.id}
