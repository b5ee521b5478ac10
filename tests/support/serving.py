"""`dominus serve` as a subprocess: its environment and the handle a test drives it by (the
`serve_processes` fixture in tests/conftest.py starts them)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import httpx

from dominus.config import Settings
from tests.support.api import API, REQUESTED_BY_HEADER
from tests.support.cli import CliResult, run_in_process
from tests.support.polling import free_port


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


def refused_serve(database_url: str, cwd: Path, *args: str, **settings: str) -> CliResult:
    """`dominus serve --port P ARGS` with these settings, expected to refuse to start: run in
    this process (a refusal is settled before any server exists), and a server that wrongly
    gets as far as building its app fails at once instead of serving (and hanging the test)."""
    refused = AssertionError("dominus serve went on to build its app: it was not refused")
    with mock.patch("dominus.server.create_app", side_effect=refused):
        command = ("serve", "--port", str(free_port()), *args)
        code, stdout, stderr = run_in_process(command, serve_env(database_url, **settings), cwd)
    return CliResult(command, code, stdout, stderr)
