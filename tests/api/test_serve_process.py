"""`dominus serve --with-worker` as a real subprocess on SQLite and PostgreSQL: enqueue over
HTTP, follow the job over Server-Sent Events until it ends, and SIGTERM: a clean exit (code 0)
with the running job handled as the worker's graceful shutdown says (cancelled by default,
back to pending with WORKER_SHUTDOWN_REQUEUE)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dominus.server import create_app
from tests.support.api import API, api_settings, local_client, runtime_of, sse_events
from tests.support.polling import wait_until
from tests.support.serving import ServeProcess, serve_env

pytestmark = [pytest.mark.slow, pytest.mark.backends("sqlite", "postgresql")]


def start_server(
    serve_processes: Callable[..., ServeProcess], database_url: str, **settings: str
) -> ServeProcess:
    env = serve_env(
        database_url,
        WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS="300",
        **settings,
    )
    server = serve_processes("--with-worker", "--diagnostic-jobs", "--concurrency", "2", env=env)
    server.wait_ready()
    return server


def test_enqueue_over_http_and_stream_progress_until_completion(
    backend: str, database_url: str, serve_processes: Callable[..., ServeProcess]
) -> None:
    server = start_server(serve_processes, database_url)
    with server.http() as http:
        response = http.post(
            f"{API}/jobs", json={"type": "diag.sleep", "payload": {"seconds": 1.5}}
        )
        assert response.status_code == 202, response.text
        job_id = response.json()["id"]
        seen: list[tuple[str, Any]] = []
        with http.stream("GET", f"{API}/jobs/{job_id}/stream", timeout=30) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert stream.headers["cache-control"] == "no-store"
            for event in sse_events(stream.iter_lines()):
                seen.append(event)
                if event[0] == "end":
                    break
        statuses = [data["status"] for name, data in seen if name == "job"]
        assert statuses[0] in ("pending", "running")
        assert "running" in statuses
        assert statuses[-1] == "completed"
        progress = [data["progress"] for name, data in seen if name == "job" and data["progress"]]
        assert progress, f"no progress was streamed: {seen}"
        assert progress[-1]["total_seconds"] == 1.5
        assert seen[-1][0] == "end"
        assert seen[-1][1]["status"] == "completed"
        final = http.get(f"{API}/jobs/{job_id}").json()
        assert final["status"] == "completed"
        [worker] = http.get(f"{API}/workers").json()
        assert worker["alive"] is True
    assert server.terminate_and_wait(20) == 0, server.output()


@pytest.mark.parametrize(
    ("settings", "expected"),
    [({}, "cancelled"), ({"WORKER_SHUTDOWN_REQUEUE": "true"}, "pending")],
    ids=["default-cancels", "requeue"],
)
def test_sigterm_stops_server_and_worker_cleanly(
    backend: str,
    database_url: str,
    serve_processes: Callable[..., ServeProcess],
    settings: dict[str, str],
    expected: str,
) -> None:
    server = start_server(serve_processes, database_url, **settings)
    with server.http() as http:
        long_job = http.post(
            f"{API}/jobs", json={"type": "diag.sleep", "payload": {"seconds": 120}}
        ).json()
        wait_until(lambda: http.get(f"{API}/jobs/{long_job['id']}").json()["status"] == "running")
        # A client following the job over SSE must not hold the shutdown up.
        with http.stream("GET", f"{API}/jobs/{long_job['id']}/stream", timeout=30) as stream:
            first = next(sse_events(stream.iter_lines()))
            assert first[0] == "job"
            code = server.terminate_and_wait(30)
    assert code == 0, server.output()

    # The server is gone; read what it left in the database through the API of a fresh app
    # (in this process: what the server wrote is the point, not a second server's start-up).
    with local_client(create_app(api_settings(database_url))) as http:
        job = http.get(f"{API}/jobs/{long_job['id']}").json()
        assert job["status"] == expected, (job, server.output())
        if expected == "pending":
            assert job["attempts"] == 0, job  # a shutdown is not a failed attempt
        [worker] = http.get(f"{API}/workers").json()
        assert worker["alive"] is False
        assert worker["stopped_at"] is not None
        assert worker["running_jobs"] == []
    runtime_of(http).engine.dispose()
