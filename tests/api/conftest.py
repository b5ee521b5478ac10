"""The REST API suite runs on every backend: each module's database tests once on SQLite, once
on PostgreSQL (its `backends` marker; the PostgreSQL cases carry the `postgres` marker).

- `make_client(**settings)` builds an app with `create_app` on this test's database (diagnostic
  jobs on, the real clock, no `.env` and no DOMINUS variable from the environment) and returns a
  `TestClient` for it (`local_client`: Host 127.0.0.1, `X-Requested-By` sent); `client` is the
  plain one, `authed_client` the one with a token set.
- `finish_jobs(runtime)` runs a real worker in burst mode on the app's store until nothing is
  due (retries without backoff), then stops it: the way to get completed, failed (dead-lettered)
  and retried jobs without waiting.
- `assert_error(response, status, code)` checks the one error shape.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dominus.config import Settings, load_settings
from dominus.jobs import HandlerRegistry, RetryPolicy, Worker, WorkerConfig
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.runtime import Runtime
from dominus.server import create_app
from tests.polling import free_port

T = TypeVar("T")

API = "/api/v1"
TOKEN = "s3cret-t0ken"
LOCAL_BASE_URL = "http://127.0.0.1"
REQUESTED_BY_HEADER = "X-Requested-By"  # any value lets a bodiless POST or DELETE through


@pytest.fixture(autouse=True)
def _no_dominus_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DOMINUS setting leaks in from the environment running the tests."""
    for name in Settings.model_fields:
        monkeypatch.delenv(name, raising=False)


def api_settings(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "_env_file": None,
        "DATABASE_URL": database_url,
        "DOMINUS_DIAGNOSTIC_JOBS": True,
    }
    values.update(overrides)
    return load_settings(**values)


@pytest.fixture
def make_client(database_url: str) -> Iterator[Callable[..., TestClient]]:
    """Build an app (and its TestClient) on this test's database with the given settings."""
    clients: list[TestClient] = []

    def make(*, database: str | None = None, **overrides: Any) -> TestClient:
        app = create_app(api_settings(database or database_url, **overrides))
        client = local_client(app)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)
        client.app.state.services.runtime.engine.dispose()  # type: ignore[attr-defined]


def local_client(app: FastAPI, **kwargs: Any) -> TestClient:
    """A TestClient as a local program talks to the API: to 127.0.0.1 (the app answers to
    loopback names only, ADR 0008), with `X-Requested-By` so bodiless POSTs and DELETEs pass."""
    kwargs.setdefault("headers", {REQUESTED_BY_HEADER: "dominus-tests"})
    return TestClient(app, base_url=LOCAL_BASE_URL, raise_server_exceptions=False, **kwargs)


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


@pytest.fixture
def authed_client(make_client: Callable[..., TestClient]) -> TestClient:
    """An app with DOMINUS_API_TOKEN set (the client sends no header by itself)."""
    return make_client(DOMINUS_API_TOKEN=TOKEN)


def runtime_of(client: TestClient) -> Runtime:
    runtime: Runtime = client.app.state.services.runtime  # type: ignore[attr-defined]
    return runtime


@pytest.fixture
def runtime(client: TestClient) -> Runtime:
    """The runtime (engine, store, clock) of `client`'s app."""
    return runtime_of(client)


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


@pytest.fixture
def worker_threads() -> Iterator[Callable[..., WorkerThread]]:
    """Start background workers; every one still running is stopped after the test."""
    started: list[WorkerThread] = []

    def start(runtime: Runtime, **config: Any) -> WorkerThread:
        worker = WorkerThread(runtime, **config).start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        if worker.thread.is_alive():
            worker.stop()


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
    name, data = "message", []
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


# --- `dominus serve` subprocesses -------------------------------------------------------------


def dominus_executable() -> str:
    """The `dominus` console script of the interpreter running the tests (the project venv)."""
    candidate = Path(sys.executable).parent / "dominus"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("dominus")
    assert found is not None, "the `dominus` command is not installed next to the interpreter"
    return found


@dataclass
class ServeProcess:
    """A `dominus serve` subprocess with its output captured to files."""

    popen: subprocess.Popen[bytes]
    port: int
    stdout_path: Path
    stderr_path: Path
    token: str | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        out = self.stdout_path.read_text(errors="replace")
        err = self.stderr_path.read_text(errors="replace")
        return f"----- stdout\n{out}----- stderr\n{err}"

    def http(self, **kwargs: Any) -> httpx.Client:
        headers = {REQUESTED_BY_HEADER: "dominus-tests"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=10, **kwargs)

    def wait_ready(self, timeout: float = 20) -> None:
        """Poll /api/v1/health until the server answers 200 (fails if the process exits)."""
        deadline = time.monotonic() + timeout
        with self.http() as http:
            while True:
                if self.popen.poll() is not None:
                    raise AssertionError(
                        f"dominus serve exited with {self.popen.returncode}:\n{self.output()}"
                    )
                with contextlib.suppress(httpx.TransportError):
                    if http.get(f"{API}/health").status_code == 200:
                        return
                if time.monotonic() >= deadline:
                    raise AssertionError(f"dominus serve did not start:\n{self.output()}")
                time.sleep(0.1)

    def terminate_and_wait(self, timeout: float) -> int:
        """SIGTERM, then the exit code (fails if it takes longer than `timeout` seconds)."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"dominus serve still running {timeout} s after SIGTERM:\n{self.output()}"
            ) from None


def serve_env(database_url: str, **settings: str) -> dict[str, str]:
    """The environment of a `dominus serve`: this database, no DOMINUS setting leaking in."""
    env = {name: value for name, value in os.environ.items() if name not in Settings.model_fields}
    return env | {"DATABASE_URL": database_url, "DOMINUS_LOG_LEVEL": "INFO"} | settings


@pytest.fixture
def serve_processes(tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    """Start `dominus serve ARGS...` subprocesses; any still running at the end is killed."""
    started: list[ServeProcess] = []

    def start(
        *args: str, env: dict[str, str], port: int | None = None, token: str | None = None
    ) -> ServeProcess:
        port = port or free_port()
        index = len(started) + 1
        stdout_path = tmp_path / f"serve-{index}.stdout.log"
        stderr_path = tmp_path / f"serve-{index}.stderr.log"
        command = [dominus_executable(), "serve", "--port", str(port), *args]
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=tmp_path,  # not the repository: a stray `.env` there must not apply
            )
        process = ServeProcess(popen, port, stdout_path, stderr_path, token)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.popen.poll() is None:
            process.popen.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(10)
