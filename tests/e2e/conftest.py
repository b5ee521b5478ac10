"""End-to-end helpers: real `dominus` processes sharing one database.

- Every e2e module runs its database tests on both backends (`pytestmark =
  pytest.mark.backends("sqlite", "postgresql")`, see tests/conftest.py); a test narrows that
  with `@pytest.mark.backends("sqlite")` (or "postgresql").
- `dominus_procs` starts `dominus worker` subprocesses (and one-shot CLI commands) with a given
  environment, captures each one's stdout/stderr to files under `tmp_path`, attaches every
  process's output to the report of a failed test, and kills whatever is still running when the
  test ends. `dominus_procs.cli(...)` runs a one-shot command in the test's own process, in the
  same environment, where a process of its own is not the point.
- `dns_servers`: two loopback DNS resolvers answering NXDOMAIN, for real providers.
- tests/support/processes.py has the process handles and `wait_until`, which polls a condition
  until it holds or a deadline passes (never a fixed sleep to wait for a state).

Deadlines are generous for a noisy 2-core machine; scale them all with DOMINUS_E2E_TIME_SCALE.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dominus.config import Settings
from dominus.jobs import HandlerRegistry, JobQueue, SqlJobStore
from dominus.jobs.diagnostic import register_diagnostic_jobs
from tests.support.fakes.dns_server import FakeDnsServer
from tests.support.processes import DominusProcesses, database_clock

# Fast settings for every process a test starts; tests override single values.
FAST_SETTINGS = {
    "WORKER_CONCURRENCY": "2",
    "JOB_QUEUE_POLL_INTERVAL_MS": "100",
    "JOB_HEARTBEAT_INTERVAL_MS": "200",
    "JOB_MAX_RUNNING_AGE_MS": "1500",
    "JOB_RETRY_BASE_MS": "50",
    "JOB_RETRY_MAX_MS": "400",
    "WORKER_GRACEFUL_SHUTDOWN_TIMEOUT_MS": "5000",
    "WORKER_SHUTDOWN_REQUEUE": "false",
    "DOMINUS_DIAGNOSTIC_JOBS": "1",
    "DOMINUS_LOG_LEVEL": "INFO",
}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    """Attach the output of every process a failed test started to its report."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    processes: DominusProcesses | None = getattr(item, "_dominus_processes", None)
    if report.failed and processes is not None and processes.processes:
        report.sections.append(("dominus processes", processes.describe()))
    # Other output a test registered: (section title, function returning the text).
    if report.failed:
        for title, describe in getattr(item, "_dominus_extra_reports", []):
            report.sections.append((title, describe()))


@pytest.fixture
def e2e_env(database_url: str) -> dict[str, str]:
    """The environment of every `dominus` process: this test's database, fast timings, and no
    DOMINUS setting leaking in from the environment running the tests."""
    env = {name: value for name, value in os.environ.items() if name not in Settings.model_fields}
    return env | FAST_SETTINGS | {"DATABASE_URL": database_url}


@pytest.fixture
def dominus_procs(
    request: pytest.FixtureRequest, tmp_path: Path, e2e_env: dict[str, str]
) -> Iterator[DominusProcesses]:
    directory = tmp_path / "processes"
    directory.mkdir()
    processes = DominusProcesses(directory, e2e_env)
    request.node._dominus_processes = processes
    yield processes
    processes.kill_leftovers()


@pytest.fixture
def dns_servers() -> Iterator[list[FakeDnsServer]]:
    """Two DNS resolvers on loopback (two confirm "available"), both answering NXDOMAIN for
    every name: every name goes on to RDAP."""
    servers = [FakeDnsServer({}, default="nxdomain") for _ in range(2)]
    yield servers
    for server in servers:
        server.close()


@pytest.fixture
def e2e_queue(store: SqlJobStore) -> JobQueue:
    """Enqueue diagnostic jobs from the test process, on the database's real clock (the shared
    `queue` fixture runs on a fake clock in 2030, whose jobs a real worker would never find
    due)."""
    return JobQueue(store, register_diagnostic_jobs(HandlerRegistry()), clock=database_clock(store))
