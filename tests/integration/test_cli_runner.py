"""The in-process `dominus` runner (tests/support/cli.py): a command sees what a fresh process
would, and the test process gets back everything the command changed, so nothing leaks into the
next test."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from dominus.cli import output
from dominus.jobs import JobStatus, SqlJobStore
from tests.support.cli import Cli

NOISY = ("alembic", "httpx", "httpcore")


@pytest.fixture
def cli(tmp_path: Path, database_url: str) -> Cli:
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    return Cli(workdir, database_url)


def process_state() -> dict[str, Any]:
    root = logging.getLogger()
    return {
        "environ": dict(os.environ),
        "cwd": Path.cwd(),
        "argv": list(sys.argv),
        "streams": (sys.stdin, sys.stdout, sys.stderr),
        "root handlers": list(root.handlers),
        "root level": root.level,
        "noisy levels": [logging.getLogger(name).level for name in NOISY],
        "signals": [signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)],
        "console sizes": [
            (console._width, console._height) for console in (output.console, output.errors)
        ],
    }


def test_a_worker_run_in_process_leaves_the_test_process_as_it_was(
    cli: Cli, store: SqlJobStore
) -> None:
    before = process_state()
    enqueued = cli.diag("enqueue", "diag.noop")
    assert enqueued.code == 0, str(enqueued)
    # `worker` sets up logging and installs SIGTERM/SIGINT handlers, as in a process of its own.
    worked = cli.diag("worker", "--burst", env={"DOMINUS_LOG_LEVEL": "INFO"})
    assert worked.code == 0, str(worked)
    assert "started: concurrency" in worked.stderr, str(worked)
    assert store.get_job(int(enqueued.stdout)).status is JobStatus.COMPLETED
    assert process_state() == before
    assert "DOMINUS_LOG_LEVEL" not in os.environ


def test_settings_and_the_working_directory_are_the_commands_own(
    cli: Cli,
) -> None:
    before = process_state()
    (cli.cwd / ".env").write_text("JOB_RETRY_BASE_MS=not-a-number\n", encoding="utf-8")
    refused = cli.run("queue", "stats")
    assert refused.code == 2, str(refused)
    assert "JOB_RETRY_BASE_MS" in refused.stderr, str(refused)
    (cli.cwd / ".env").unlink()
    assert cli.run("queue", "stats").code == 0
    assert process_state() == before
