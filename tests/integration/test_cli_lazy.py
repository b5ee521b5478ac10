"""The CLI imports what a command needs when it runs (dominus.cli.lazy): the read commands and
`--help` start without the handlers, the pipeline, the providers, the HTTP and DNS clients, the
API server, the PostgreSQL driver, Alembic and numpy. Checked by what a fresh interpreter has
imported after the command, not by a clock."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer._click import Command
from typer.testing import CliRunner

from dominus.cli.lazy import LazyCommand
from dominus.cli.main import COMMANDS, app
from dominus.jobs import JobQueue

# Runs one command through the real entry point, then prints the modules it left imported.
PROBE = """
import json, sys
from dominus.cli.main import main
sys.argv = ["dominus", *sys.argv[1:]]
try:
    main()
except SystemExit as exit_:
    code = exit_.code
else:
    code = 0
sys.stdout.flush()
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""

# Packages a read command or `--help` must not import (each with its submodules).
HEAVY = (
    "httpx",
    "httpcore",
    "dns",
    "uvicorn",
    "fastapi",
    "starlette",
    "psycopg",
    "alembic",
    "numpy",
    "matplotlib",
    "dominus.handlers",
    "dominus.api",
    "dominus.web",
    "dominus.server",
    "dominus.valuation",
    "dominus.notify.webhook",
)
# dominus.providers and dominus.pipeline: only their settings slices, which the settings class
# is made of (and the CSV reader and its error, with which the settings check the TLD price
# table, and the per-server rate limits' parser, which checks PROVIDER_RATE_LIMITS).
ALLOWED_WITHIN = {
    "dominus.providers": {
        "dominus.providers",
        "dominus.providers.settings",
        "dominus.providers.csvfiles",
        "dominus.providers.errors",
        "dominus.providers.rate_limits",
    },
    "dominus.pipeline": {"dominus.pipeline", "dominus.pipeline.settings"},
}


def imported_by(args: list[str], database_url: str, cwd: Path) -> list[str]:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("DOMINUS_")
    }
    environment |= {"DATABASE_URL": database_url, "COLUMNS": "120"}
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    report = json.loads(completed.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, completed.stderr
    assert completed.stdout, completed.stderr  # the command did its work
    modules: list[str] = report["modules"]
    return modules


def too_heavy(modules: list[str]) -> list[str]:
    found = [
        name
        for name in modules
        if any(name == heavy or name.startswith(heavy + ".") for heavy in HEAVY)
    ]
    for package, allowed in ALLOWED_WITHIN.items():
        found += [
            name
            for name in modules
            if (name == package or name.startswith(package + ".")) and name not in allowed
        ]
    return found


@pytest.mark.parametrize(
    "args", [["--help"], ["queue", "stats"], ["jobs", "list"], ["jobs", "list", "--json"]]
)
def test_read_commands_and_help_import_no_heavy_module(
    args: list[str], database_url: str, queue: JobQueue, tmp_path: Path
) -> None:
    queue.enqueue_job("diag.noop")
    modules = imported_by(args, database_url, tmp_path)
    assert too_heavy(modules) == []
    if args != ["--help"]:
        assert "dominus.jobs.sql.store" in modules  # the probe saw a command that read rows


def test_the_probe_sees_a_heavy_command_import_its_modules(
    database_url: str, tmp_path: Path
) -> None:
    """The check can fail: `dominus enqueue` builds the handler registry."""
    modules = imported_by(["enqueue", "diag.noop", "--diagnostic-jobs"], database_url, tmp_path)
    assert "dominus.handlers" in too_heavy(modules)


def first_paragraph(command: Command) -> str:
    """What `dominus --help` shows for a command (Typer's rich help: the first paragraph of its
    help, line breaks kept)."""
    return inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0].strip()


@pytest.mark.parametrize("lazy", COMMANDS, ids=[command.name for command in COMMANDS])
def test_each_listed_line_is_the_commands_own_help(lazy: LazyCommand) -> None:
    loaded = lazy.load()
    assert loaded.name == lazy.name
    assert first_paragraph(loaded) == lazy.help
    assert not loaded.hidden
    assert not loaded.deprecated
    assert not getattr(loaded, "rich_help_panel", None)  # the listing has one panel


def test_help_lists_the_same_with_every_command_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """`dominus --help` from the lines of COMMANDS is what it is once every command is imported
    (which the listing then shows from the commands themselves)."""
    group = typer.main.get_command(app)
    monkeypatch.setattr(typer.main, "get_command", lambda _app: group)  # keep this one group
    runner = CliRunner(env={"COLUMNS": "100"})
    from_lines = runner.invoke(app, ["--help"])
    commands = group.commands  # type: ignore[attr-defined]
    assert list(commands) == [command.name for command in COMMANDS]
    for name in list(commands):
        commands[name]  # imports the command
    from_commands = runner.invoke(app, ["--help"])
    assert from_lines.exit_code == from_commands.exit_code == 0
    assert "valuation" in from_lines.output
    assert from_lines.output == from_commands.output
