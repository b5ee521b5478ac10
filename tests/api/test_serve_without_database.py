"""`dominus serve --with-worker` starts whatever the state of its database (ADR 0006, 0011):
`/health` answers, `/ready` says what is wrong in the error shape, the other endpoints answer
503, the embedded worker waits instead of dying, and everything recovers without a restart once
the database is there and migrated."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.api import API, assert_error
from tests.support.cli import run_in_process
from tests.support.databases import PostgresDatabases
from tests.support.polling import free_port, wait_until
from tests.support.serving import ServeProcess, serve_env

pytestmark = pytest.mark.slow


def start(serve_processes: Callable[..., ServeProcess], database_url: str) -> ServeProcess:
    env = serve_env(database_url, JOB_QUEUE_POLL_INTERVAL_MS="100")
    server = serve_processes("--with-worker", "--diagnostic-jobs", env=env)
    server.wait_ready()  # /health: 200 although the database is not usable
    return server


def ready_code(http: httpx.Client) -> str:
    response = http.get(f"{API}/ready")
    return "ready" if response.status_code == 200 else response.json()["error"]["code"]


def upgrade(database_url: str, cwd: Path) -> None:
    """`dominus db upgrade`, in this process: the server's recovery is the point, not the
    command's start-up."""
    code, _, stderr = run_in_process(("db", "upgrade"), serve_env(database_url), cwd)
    assert code == 0, stderr


def assert_serves_jobs(http: httpx.Client) -> None:
    """An enqueue is accepted and the embedded worker runs the job."""
    response = http.post(f"{API}/jobs", json={"type": "diag.noop"})
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    wait_until(
        lambda: http.get(f"{API}/jobs/{job_id}").json()["status"] == "completed",
        30,
        "the embedded worker to run the job",
    )


def test_an_unmigrated_sqlite_file_is_served_and_recovers_after_db_upgrade(
    serve_processes: Callable[..., ServeProcess], tmp_path: Path
) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    url = f"sqlite:///{path}"
    server = start(serve_processes, url)
    with server.http() as http:
        error = assert_error(http.get(f"{API}/ready"), 503, "not_migrated")
        assert "dominus db upgrade" in error["message"]
        for method, endpoint in (("GET", "/jobs"), ("POST", "/jobs"), ("GET", "/queue/stats")):
            body = {"type": "diag.noop"} if method == "POST" else None
            assert_error(http.request(method, f"{API}{endpoint}", json=body), 503, "not_migrated")
        wait_until(lambda: "the worker waits for the database" in server.output(), 15, "the log")

        upgrade(url, tmp_path)
        wait_until(lambda: ready_code(http) == "ready", 15, "/ready to turn 200")
        assert_serves_jobs(http)
    assert server.terminate_and_wait(20) == 0, server.output()


@pytest.mark.postgres
def test_an_unreachable_postgresql_server_is_served_as_unavailable(
    serve_processes: Callable[..., ServeProcess],
) -> None:
    # Nothing listens there: the connection is refused.
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/dominus"
    server = start(serve_processes, url)
    with server.http() as http:
        error = assert_error(http.get(f"{API}/ready"), 503, "database_unavailable")
        assert error["message"] == "the database is unavailable"
        assert_error(http.get(f"{API}/jobs"), 503, "database_unavailable")
        wait_until(lambda: "the worker waits for the database" in server.output(), 15, "the log")
        assert http.get(f"{API}/health").status_code == 200
    assert server.popen.poll() is None, server.output()
    assert server.terminate_and_wait(20) == 0, server.output()


@pytest.fixture
def database_created_later(postgres_databases: PostgresDatabases) -> Iterator[str]:
    """The name of a PostgreSQL database that does not exist yet (dropped after the test)."""
    name = f"dominus_later_{uuid.uuid4().hex[:12]}"
    yield name
    postgres_databases.drop(name)


@pytest.mark.postgres
def test_a_postgresql_database_created_and_migrated_after_start_is_picked_up(
    serve_processes: Callable[..., ServeProcess],
    postgres_databases: PostgresDatabases,
    database_created_later: str,
    tmp_path: Path,
) -> None:
    url = postgres_databases.url(database_created_later)
    server = start(serve_processes, url)
    with server.http() as http:
        assert_error(http.get(f"{API}/ready"), 503, "database_unavailable")  # no such database
        postgres_databases.create(database_created_later)
        wait_until(lambda: ready_code(http) == "not_migrated", 15, "/ready to say not_migrated")
        upgrade(url, tmp_path)
        wait_until(lambda: ready_code(http) == "ready", 15, "/ready to turn 200")
        assert_serves_jobs(http)
    assert server.terminate_and_wait(20) == 0, server.output()


def test_the_server_stops_with_its_worker_when_the_sqlite_file_is_deleted(
    serve_processes: Callable[..., ServeProcess], migrated_sqlite_template: Path, tmp_path: Path
) -> None:
    path = tmp_path / "dominus.db"
    shutil.copyfile(migrated_sqlite_template, path)
    server = start(serve_processes, f"sqlite:///{path}")
    wait_until(lambda: "dominus.worker: worker " in server.output(), 15, "the worker to start")
    path.unlink()
    assert server.popen.wait(30) == 1, server.output()
    last_line = server.output().splitlines()[-1]
    assert last_line.startswith(f"error: the database file {path} was deleted"), server.output()
