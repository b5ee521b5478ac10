"""SQLite files as an operator meets them (ADR 0011): a mistyped path is refused instead of
being created, and a read-only database can still be read."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dominus.config import Settings
from dominus.db.migrate import head_revision
from tests.polling import free_port

DOMINUS = Path(sys.executable).with_name("dominus")


@dataclass
class Ran:
    args: Sequence[str]
    code: int
    stdout: str
    stderr: str


def dominus_env(database_url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in Settings.model_fields}
    return env | {"DATABASE_URL": database_url, "DOMINUS_DIAGNOSTIC_JOBS": "1", "COLUMNS": "200"}


def run_all(
    cwd: Path, database_url: str, *commands: Sequence[str], prefix: Sequence[str] = ()
) -> list[Ran]:
    """Run `dominus` commands side by side (each pays the interpreter's start-up)."""
    started = [
        (
            args,
            subprocess.Popen(
                [*prefix, str(DOMINUS), *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                env=dominus_env(database_url),
                cwd=cwd,
            ),
        )
        for args in commands
    ]
    results = []
    for args, process in started:
        stdout, stderr = process.communicate(timeout=60)
        results.append(Ran(args, process.returncode, stdout, stderr))
    return results


def test_a_missing_database_file_is_refused_not_created(tmp_path: Path) -> None:
    path = tmp_path / "typo" / "data" / "dominus.db"
    url = f"sqlite:///{path}"
    results = run_all(
        tmp_path,
        url,
        ("queue", "stats"),
        ("jobs", "list"),
        ("jobs", "show", "1"),
        ("dlq", "list"),
        ("runs", "list"),
        ("db", "current"),
        ("enqueue", "diag.noop"),
        ("worker", "--burst"),
        ("run", "--sample", "--sync"),
        ("serve", "--port", str(free_port())),
    )
    for ran in results:
        assert ran.code == 2, ran
        assert ran.stderr.splitlines() == [
            f"error: no database at {path}: check DATABASE_URL, or create it with "
            "`dominus db upgrade`"
        ], ran
    assert not (tmp_path / "typo").exists(), "a refused command created directories"

    # `db upgrade` is the one command that creates the database (and its directory).
    [upgraded] = run_all(tmp_path, url, ("db", "upgrade"))
    assert upgraded.code == 0, upgraded
    assert path.is_file()
    [current] = run_all(tmp_path, url, ("db", "current"))
    assert current.stdout.strip() == f"database: {head_revision()}; code expects: {head_revision()}"
