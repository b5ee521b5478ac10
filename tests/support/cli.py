"""Running the `dominus` command in tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dominus.config import Settings

DOMINUS = Path(sys.executable).with_name("dominus")


@dataclass
class CliResult:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def stderr_lines(self) -> list[str]:
        return self.stderr.splitlines()

    def __str__(self) -> str:
        return (
            f"`dominus {' '.join(self.args)}` exited {self.code}\n"
            f"--- stdout\n{self.stdout}--- stderr\n{self.stderr}"
        )


COMMAND_TIMEOUT = 120.0


class Cli:
    """Runs `dominus` with a clean environment (no DOMINUS setting leaks in from the caller)
    in a scratch working directory (a stray `.env` must not change the settings)."""

    def __init__(self, cwd: Path, database_url: str) -> None:
        self.cwd = cwd
        inherited = {k: v for k, v in os.environ.items() if k not in Settings.model_fields}
        # Wide enough that Rich tables do not truncate ids, types and statuses.
        self.env = inherited | {"DATABASE_URL": database_url, "COLUMNS": "200"}
        self.background: list[subprocess.Popen[str]] = []

    def command(self, args: tuple[str, ...]) -> list[str]:
        if DOMINUS.exists():
            return [str(DOMINUS), *args]
        return [sys.executable, "-m", "dominus.cli.main", *args]  # pragma: no cover

    # A safety net against a hung process, not a timing check: on a loaded 2-core machine a
    # command's imports alone can take 10 s, and several run at once.
    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = COMMAND_TIMEOUT
    ) -> CliResult:
        completed = subprocess.run(
            self.command(args),
            capture_output=True,
            text=True,
            env=self.env | (env or {}),
            cwd=self.cwd,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        return CliResult(args, completed.returncode, completed.stdout, completed.stderr)

    def ok(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = COMMAND_TIMEOUT
    ) -> CliResult:
        result = self.run(*args, env=env, timeout=timeout)
        assert result.code == 0, str(result)
        return result

    def diag(self, *args: str, env: dict[str, str] | None = None) -> CliResult:
        """Run with DOMINUS_DIAGNOSTIC_JOBS=1 (the diag.* types registered)."""
        return self.run(*args, env={"DOMINUS_DIAGNOSTIC_JOBS": "1"} | (env or {}))

    def run_many(
        self, *commands: tuple[str, ...], timeout: float = COMMAND_TIMEOUT
    ) -> list[CliResult]:
        """Run independent commands concurrently (each one pays ~0.6 s of start-up)."""
        processes = [(args, self.start(*args)) for args in commands]
        results = []
        for args, process in processes:
            stdout, stderr = process.communicate(timeout=timeout)
            results.append(CliResult(args, process.returncode, stdout, stderr))
        return results

    def start(
        self, *args: str, env: dict[str, str] | None = None, stderr: Path | None = None
    ) -> subprocess.Popen[str]:
        """Start `dominus ARGS` in the background (stderr to a file, if given, so a test can
        watch it while the process runs)."""
        with open(os.devnull if stderr is None else stderr, "w", encoding="utf-8") as sink:
            process = subprocess.Popen(
                self.command(args),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE if stderr is None else sink,
                text=True,
                env=self.env | (env or {}),
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
            )
        self.background.append(process)
        return process

    def kill_leftovers(self) -> None:
        for process in self.background:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=10)


def assert_bad_input(result: CliResult, *fragments: str) -> str:
    """Exit 2, nothing on stdout, exactly one `error: ...` line on stderr naming `fragments`."""
    assert result.code == 2, str(result)
    assert result.stdout == "", str(result)
    assert len(result.stderr_lines) == 1, str(result)
    line = result.stderr_lines[0]
    assert line.startswith("error: "), str(result)
    for fragment in fragments:
        assert fragment in line, f"{fragment!r} not in {line!r}"
    return line
