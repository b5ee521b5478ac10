"""Running the `dominus` command in tests.

`Cli.run` calls the command's real entry point (`dominus.cli.main:main`) in this process and
returns what a shell would see: the exit code, stdout and stderr. Starting Python and importing
DOMINUS costs a subprocess more than a second; in process a command costs what it does. For the
length of the call the runner gives the command what a fresh `dominus` process would have and
takes it back afterwards, so nothing leaks into the next test:

- the environment: the one the runner was made with (no DOMINUS setting from the caller's),
  plus the call's own variables; restored afterwards;
- the working directory (the runner's scratch directory: a stray `.env` must not apply);
- stdin (empty), stdout and stderr (captured), `sys.argv`;
- logging: the root logger without handlers (so the command's `basicConfig` takes effect and
  writes to the captured stderr), every logger's level restored afterwards;
- the SIGTERM/SIGINT handlers the long-running commands install;
- every database engine the command opened, disposed of afterwards;
- the size of the command's Rich consoles, which a process reads from COLUMNS and LINES when
  it starts.

`Cli.run_process` and `Cli.start` run a real `dominus` subprocess, for the tests where the
process is the point: signals, a process that runs on while the test acts, start-up.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from unittest import mock

from rich.console import Console
from sqlalchemy import Engine

import dominus.runtime
from dominus.cli import output
from dominus.cli.main import main
from dominus.config import Settings
from dominus.db.engine import create_database_engine

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


# A safety net against a hung subprocess, not a timing check: on a loaded 2-core machine a
# command's imports alone can take 10 s, and several run at once. (In process, the suite's
# per-test timeout is the net.)
COMMAND_TIMEOUT = 120.0


class Cli:
    """Runs `dominus` with a clean environment (no DOMINUS setting leaks in from the caller)
    in a scratch working directory (a stray `.env` must not change the settings): in this
    process by default, as a subprocess with `run_process` and `start`."""

    def __init__(self, cwd: Path, database_url: str | None = None) -> None:
        self.cwd = cwd
        inherited = {k: v for k, v in os.environ.items() if k not in Settings.model_fields}
        # Wide enough that Rich tables do not truncate ids, types and statuses.
        self.env = inherited | {"COLUMNS": "200"}
        if database_url is not None:
            self.env["DATABASE_URL"] = database_url
        self.background: list[subprocess.Popen[str]] = []

    def __call__(self, *args: str) -> CliResult:
        return self.run(*args)

    def command(self, args: tuple[str, ...]) -> list[str]:
        if DOMINUS.exists():
            return [str(DOMINUS), *args]
        return [sys.executable, "-m", "dominus.cli.main", *args]  # pragma: no cover

    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = COMMAND_TIMEOUT
    ) -> CliResult:
        """`dominus ARGS` in this process (`timeout` applies to `run_process` only)."""
        code, stdout, stderr = run_in_process(args, self.env | (env or {}), self.cwd)
        return CliResult(args, code, stdout, stderr)

    def run_process(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = COMMAND_TIMEOUT
    ) -> CliResult:
        """`dominus ARGS` as a subprocess, to completion."""
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
        """Run independent commands, one after the other."""
        return [self.run(*args, timeout=timeout) for args in commands]

    def start(
        self, *args: str, env: dict[str, str] | None = None, stderr: Path | None = None
    ) -> subprocess.Popen[str]:
        """Start `dominus ARGS` as a subprocess in the background (stderr to a file, if given,
        so a test can watch it while the process runs)."""
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


def run_in_process(
    args: tuple[str, ...], env: Mapping[str, str], cwd: Path
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `dominus ARGS` run through `main()` in this process, with
    exactly `env` as its environment and `cwd` as its working directory."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_environment(env))
        stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(_argv(["dominus", *args]))
        stack.enter_context(_signal_handlers())
        stack.enter_context(_disposed_engines())
        stdout, stderr = stack.enter_context(_standard_streams())
        stack.enter_context(_logging_of_its_own())
        stack.enter_context(_console_size(env))
        code = _exit_code_of(main)
        sys.stdout.flush()
        sys.stderr.flush()
        return code, _text(stdout), _text(stderr)


def _exit_code_of(entry_point: Callable[[], None]) -> int:
    """The exit code a process running `entry_point` would end with (an uncaught exception:
    its traceback on stderr and 1, as the interpreter does)."""
    try:
        entry_point()
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    except Exception:  # what the interpreter prints for an uncaught exception
        # (KeyboardInterrupt and pytest's own outcomes, a timeout among them, are the test
        # process's: they go on up.)
        traceback.print_exc()
        return 1
    return 0


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """os.environ is `env` inside (changed key by key: other threads never see it empty)."""
    saved = dict(os.environ)

    def become(wanted: Mapping[str, str]) -> None:
        for name in set(os.environ) - set(wanted):
            del os.environ[name]
        for name, value in wanted.items():
            if os.environ.get(name) != value:
                os.environ[name] = value

    become(env)
    try:
        yield
    finally:
        become(saved)


@contextlib.contextmanager
def _argv(argv: list[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = argv
    try:
        yield
    finally:
        sys.argv = saved


@contextlib.contextmanager
def _standard_streams() -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """Empty stdin; stdout and stderr into buffers, encoded as this process's own are (a child
    process would inherit the same locale)."""
    stdout, stderr = io.BytesIO(), io.BytesIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    sys.stdout = _text_stream(stdout, sys.__stdout__, default_errors="strict")
    sys.stderr = _text_stream(stderr, sys.__stderr__, default_errors="backslashreplace")
    try:
        yield stdout, stderr
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def _text_stream(buffer: io.BytesIO, like: TextIO | None, default_errors: str) -> io.TextIOWrapper:
    encoding = getattr(like, "encoding", None) or "utf-8"
    errors = getattr(like, "errors", None) or default_errors
    return io.TextIOWrapper(buffer, encoding=encoding, errors=errors, write_through=True)


def _text(buffer: io.BytesIO) -> str:
    return buffer.getvalue().decode("utf-8", "replace")


@contextlib.contextmanager
def _logging_of_its_own() -> Iterator[None]:
    """No root handler inside (pytest's capture handlers are set aside), so the command's
    `logging.basicConfig` installs its own; afterwards its handlers are closed and every
    logger's handlers and level are as they were."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {
        name: logger.level
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    root.handlers = []
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers = handlers
        root.setLevel(level)
        for name, logger in logging.Logger.manager.loggerDict.items():
            if isinstance(logger, logging.Logger):
                logger.setLevel(levels.get(name, logging.NOTSET))


@contextlib.contextmanager
def _signal_handlers() -> Iterator[None]:
    """The long-running commands install SIGTERM/SIGINT handlers; the test process gets its own
    back."""
    if threading.current_thread() is not threading.main_thread():
        yield  # the command cannot install any either
        return
    saved = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def _console_size(env: Mapping[str, str]) -> Iterator[None]:
    """The module-level consoles of `dominus.cli.output` took their size from COLUMNS and LINES
    when this process imported them (pytest-xdist sets COLUMNS=80 in its workers); inside, they
    have the size a process started with `env` would give them. (Rich keeps a size given at
    construction in private attributes; there is no public way to unset it.)"""
    consoles = [value for value in vars(output).values() if isinstance(value, Console)]
    saved = [(console._width, console._height) for console in consoles]
    columns, lines = env.get("COLUMNS", ""), env.get("LINES", "")
    for console in consoles:
        console._width = int(columns) if columns.isdigit() else None
        console._height = int(lines) if lines.isdigit() else None
    try:
        yield
    finally:
        for console, (width, height) in zip(consoles, saved, strict=True):
            console._width, console._height = width, height


@contextlib.contextmanager
def _disposed_engines() -> Iterator[None]:
    """Every engine the command's runtime opened is disposed of afterwards (a process's exit
    would have closed its connections)."""
    engines: list[Engine] = []

    def tracked(*args: Any, **kwargs: Any) -> Engine:
        engine = create_database_engine(*args, **kwargs)
        engines.append(engine)
        return engine

    try:
        with mock.patch.object(dominus.runtime, "create_database_engine", side_effect=tracked):
            yield
    finally:
        for engine in engines:
            engine.dispose()


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
