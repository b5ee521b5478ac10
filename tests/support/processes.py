"""Real `dominus` processes for the end-to-end tests: each one's output captured to files, a
poll-until helper whose deadlines scale with DOMINUS_E2E_TIME_SCALE, the clock the processes
use on a database."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

import pytest

from dominus.errors import DatabaseBusyError
from dominus.jobs import JobStatus, SqlJobStore
from dominus.jobs.clock import Clock, DatabaseClock, utc_now
from tests.support.cli import CliResult, run_in_process

T = TypeVar("T")
TIME_SCALE = float(os.environ.get("DOMINUS_E2E_TIME_SCALE", "1"))
_WORKER_STARTED = re.compile(r"worker (\S+) started: concurrency")
_JOB_LINE = re.compile(r"job (\d+) (\S+) (started|completed) \(attempt (\d+)/(\d+)\)")


def dominus_executable() -> str:
    """The `dominus` console script of the interpreter running the tests (the project venv)."""
    candidate = Path(sys.executable).parent / "dominus"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("dominus")
    if found is None:  # pragma: no cover - a broken installation
        pytest.fail("the `dominus` command is not installed next to the test interpreter")
    return found


def wait_until(
    condition: Callable[[], T | Literal[False] | None],
    timeout: float,
    *,
    interval: float = 0.05,
    message: str | Callable[[], str] = "condition",
) -> T:
    """Poll `condition` until it returns something truthy (returned) or `timeout` seconds (times
    DOMINUS_E2E_TIME_SCALE) pass (AssertionError naming `message`). A database that is busy for
    a moment counts as "not yet"."""
    deadline = time.monotonic() + timeout * TIME_SCALE
    while True:
        value: T | Literal[False] | None
        try:
            value = condition()
        except DatabaseBusyError:
            value = None
        if value:
            return value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout * TIME_SCALE:g} s waiting for {text}")
        time.sleep(interval)


@dataclass
class DominusProcess:
    """One `dominus` subprocess with its output captured to files."""

    name: str
    args: list[str]
    popen: subprocess.Popen[bytes]
    stdout_path: Path
    stderr_path: Path
    started_at: float = field(default_factory=time.monotonic)
    _worker_id: str | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def is_running(self) -> bool:
        return self.popen.poll() is None

    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def worker_id(self, timeout: float = 90) -> str:
        """The id the worker logged at start-up (waits for that line). Generous: eight workers
        importing at once on a loaded 2-core machine take tens of seconds to start."""
        if self._worker_id is None:

            def logged() -> str | None:
                match = _WORKER_STARTED.search(self.stderr())
                if match is None and not self.is_running():
                    raise AssertionError(
                        f"{self.name} exited with {self.returncode} before logging its id:\n"
                        + self.stderr()
                    )
                return match.group(1) if match else None

            self._worker_id = wait_until(logged, timeout, message=f"{self.name} to start")
        return self._worker_id

    def job_lines(self, event: str) -> list[tuple[int, str, int]]:
        """(job id, job type, attempt) of every 'job N TYPE <event> (attempt a/m)' log line."""
        return [
            (int(match.group(1)), match.group(2), int(match.group(4)))
            for match in _JOB_LINE.finditer(self.stderr())
            if match.group(3) == event
        ]

    def send(self, signum: int) -> None:
        if self.is_running():
            self.popen.send_signal(signum)

    def wait_exit(self, timeout: float) -> int:
        """Wait for the process to exit; returns its exit code (-N when killed by signal N)."""
        try:
            return self.popen.wait(timeout * TIME_SCALE)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"{self.name} (pid {self.pid}) still running after {timeout * TIME_SCALE:g} s"
            ) from None

    def stop(self, timeout: float = 15) -> int:
        """SIGTERM, then wait for the exit code."""
        self.send(signal.SIGTERM)
        return self.wait_exit(timeout)

    def describe(self) -> str:
        state = "running" if self.is_running() else f"exit code {self.returncode}"
        return (
            f"===== {self.name}: pid {self.pid}, {state}: {' '.join(self.args)}\n"
            f"----- stdout\n{self.stdout()}----- stderr\n{self.stderr()}"
        )


class DominusProcesses:
    """Starts `dominus` processes for one test and cleans up after it."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        self.env = env
        self.executable = dominus_executable()
        self.processes: list[DominusProcess] = []

    def start(
        self, *args: str, env: dict[str, str] | None = None, name: str | None = None
    ) -> DominusProcess:
        """Start `dominus ARGS...` in the background."""
        index = len(self.processes) + 1
        name = name or f"{index:02d}-{args[0] if args else 'dominus'}"
        stdout_path = self.directory / f"{name}.stdout.log"
        stderr_path = self.directory / f"{name}.stderr.log"
        command = [self.executable, *args]
        with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
            popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=self.env | (env or {}),
                # Not the repository: a stray `.env` there must not change the settings.
                cwd=self.directory,
            )
        process = DominusProcess(name, command, popen, stdout_path, stderr_path)
        self.processes.append(process)
        return process

    def start_worker(
        self, *args: str, env: dict[str, str] | None = None, name: str | None = None
    ) -> DominusProcess:
        """Start `dominus worker --diagnostic-jobs ARGS...`."""
        index = len(self.processes) + 1
        return self.start(
            "worker", "--diagnostic-jobs", *args, env=env, name=name or f"{index:02d}-worker"
        )

    def run(
        self, *args: str, timeout: float = 30, check: bool = True, env: dict[str, str] | None = None
    ) -> DominusProcess:
        """Run `dominus ARGS...` to completion; with `check`, insist on exit code 0."""
        process = self.start(*args, env=env)
        code = process.wait_exit(timeout)
        if check and code != 0:
            raise AssertionError(f"`dominus {' '.join(args)}` failed:\n{process.describe()}")
        return process

    def cli(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> CliResult:
        """`dominus ARGS...` run to completion in this process, in the processes' environment
        (tests/support/cli.py): for the one-shot commands around the processes under test,
        where a process of its own is not the point (its start-up costs more than a second);
        with `check`, insist on exit code 0."""
        result = CliResult(args, *run_in_process(args, self.env | (env or {}), self.directory))
        if check and result.code != 0:
            raise AssertionError(str(result))
        return result

    def describe(self) -> str:
        database = f"===== DATABASE_URL={self.env.get('DATABASE_URL')}"
        return "\n".join([database, *(process.describe() for process in self.processes)])

    def kill_leftovers(self) -> list[str]:
        """SIGKILL every process still running (by its own pid); returns their names."""
        leftovers = [process for process in self.processes if process.is_running()]
        for process in leftovers:
            process.popen.kill()
        for process in leftovers:
            # A process stuck in the kernel (D state) is left behind rather than hang the suite.
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(10)
        return [process.name for process in leftovers]


def database_clock(store: SqlJobStore) -> Clock:
    """The clock the `dominus` processes use on this database: the server's clock on PostgreSQL
    (as `dominus.cli.runtime` does), the system clock on SQLite."""
    return DatabaseClock(store.engine) if store.backend == "postgresql" else utc_now


def wait_running_on(
    store: SqlJobStore, job_id: int, worker: DominusProcess, timeout: float = 20
) -> None:
    """Until the job is running under `worker`'s claim and its handler has started."""
    worker_id = worker.worker_id()

    def running_there() -> bool:
        job = store.get_job(job_id)
        started = any(line[0] == job_id for line in worker.job_lines("started"))
        return job.status is JobStatus.RUNNING and job.locked_by == worker_id and started

    wait_until(
        running_there,
        timeout,
        message=lambda: f"job {job_id} running on {worker_id}: {store.get_job(job_id)}",
    )
