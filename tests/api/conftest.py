"""The REST API suite runs on every backend: each module's database tests once on SQLite, once
on PostgreSQL (its `backends` marker; the PostgreSQL cases carry the `postgres` marker).

- `make_client(**settings)` builds an app with `create_app` on this test's database (diagnostic
  jobs on, the real clock, no `.env` and no DOMINUS variable from the environment) and returns a
  `TestClient` for it (`local_client`: Host 127.0.0.1, `X-Requested-By` sent); `client` is the
  plain one, `authed_client` the one with a token set.
- `worker_threads` starts background workers and stops them after the test.

The helpers these tests share (`finish_jobs`, `assert_error`, `enqueue`, ...) are in
tests/support/api.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dominus.config import Settings
from dominus.runtime import Runtime
from dominus.server import create_app
from tests.support.api import TOKEN, WorkerThread, api_settings, local_client, runtime_of


@pytest.fixture(autouse=True)
def _no_dominus_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DOMINUS setting leaks in from the environment running the tests."""
    for name in Settings.model_fields:
        monkeypatch.delenv(name, raising=False)


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


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


@pytest.fixture
def authed_client(make_client: Callable[..., TestClient]) -> TestClient:
    """An app with DOMINUS_API_TOKEN set (the client sends no header by itself)."""
    return make_client(DOMINUS_API_TOKEN=TOKEN)


@pytest.fixture
def runtime(client: TestClient) -> Runtime:
    """The runtime (engine, store, clock) of `client`'s app."""
    return runtime_of(client)


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
