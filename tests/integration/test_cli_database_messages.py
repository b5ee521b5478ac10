"""The CLI's one `error:` line for a database failure is in DOMINUS's words, with no
SQLAlchemy "Background on this error" line; the driver's text is logged just before it at
WARNING (ADR 0011)."""

from __future__ import annotations

import json
import logging
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry

import dominus.runtime
from dominus.cli.main import main
from dominus.config import Settings
from dominus.db.engine import create_database_engine
from dominus.jobs import SqlJobStore
from tests.support.cli import run_in_process

DOMINUS = Path(sys.executable).with_name("dominus")


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stderr.splitlines()


def run_dominus(cwd: Path, database_url: str, *args: str, file_size_limit: int = 0) -> Ran:
    env = {key: value for key, value in os.environ.items() if key not in Settings.model_fields}
    env |= {"DATABASE_URL": database_url, "DOMINUS_DIAGNOSTIC_JOBS": "1"}

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    if not file_size_limit:
        return Ran(*run_in_process(args, env, cwd))
    # A subprocess: the file-size limit is the process's own (it would bind the tests too).
    completed = subprocess.run(
        [str(DOMINUS), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit_file_size,
    )
    return Ran(completed.returncode, completed.stdout, completed.stderr)


def assert_database_failure(ran: Ran, message: str, logged: str) -> None:
    """Exit 1; the last line is `error: <message>`, the only `error:` line; the driver's text is
    in a WARNING log line before it; no SQLAlchemy link anywhere."""
    assert ran.code == 1, ran
    assert ran.lines and ran.lines[-1] == f"error: {message}", ran
    assert [line for line in ran.lines if line.startswith("error:")] == ran.lines[-1:], ran
    assert any("WARNING" in line and logged in line for line in ran.lines[:-1]), ran
    assert "sqlalche.me" not in ran.stderr and "Background on this error" not in ran.stderr, ran
    assert "Traceback" not in ran.stderr, ran


@pytest.mark.postgres
@pytest.mark.parametrize("missing", ["role", "database"])
def test_a_refused_connection_names_nobody_on_the_error_line(tmp_path: Path, missing: str) -> None:
    name = f"dominus_no_such_{missing}_{uuid.uuid4().hex[:8]}"
    role, database = (name, "postgres") if missing == "role" else ("postgres", name)
    url = f"postgresql+psycopg://{role}@127.0.0.1:5432/{database}"
    ran = run_dominus(tmp_path, url, "queue", "stats")
    assert_database_failure(
        ran, "the database is unavailable", f'{missing} "{name}" does not exist'
    )
    assert name not in ran.lines[-1]


def test_a_write_failing_at_commit_is_one_line_without_the_sqlalchemy_link(
    tmp_path: Path, migrated_sqlite_template: Path
) -> None:
    """All lines of `enqueue --from-file` are one transaction, written to the WAL at COMMIT. A
    file-size limit below what that needs makes the write fail there, as a full disk would."""
    path = tmp_path / "dominus.db"
    shutil.copyfile(migrated_sqlite_template, path)
    lines = tmp_path / "jobs.jsonl"
    payload = {"fail_times": 1, "message": "x" * 1000}
    lines.write_text("".join(json.dumps(payload) + "\n" for _ in range(1000)), encoding="utf-8")
    ran = run_dominus(
        tmp_path,
        f"sqlite:///{path}",
        *("enqueue", "diag.fail", "--from-file", str(lines)),
        file_size_limit=path.stat().st_size + 100_000,
    )
    assert_database_failure(
        ran, "the database file could not be read or written (input/output error)", "I/O error"
    )
    engine = create_database_engine(f"sqlite:///{path}")
    try:
        assert SqlJobStore(engine).list_jobs() == []
    finally:
        engine.dispose()


def test_a_full_database_is_one_line_in_our_words(
    tmp_path: Path,
    migrated_sqlite_template: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SQLITE_FULL for real: the CLI (in this process, to reach its engine) may not grow the
    database file by a single page."""
    path = tmp_path / "dominus.db"
    shutil.copyfile(migrated_sqlite_template, path)

    def no_room_to_grow(connection: DBAPIConnection, _: ConnectionPoolEntry) -> None:
        assert isinstance(connection, sqlite3.Connection)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")

    def full_engine(url: str, **options: object) -> Engine:
        engine = create_database_engine(url, **options)  # type: ignore[arg-type]
        event.listen(engine, "connect", no_room_to_grow)
        return engine

    monkeypatch.setattr(dominus.runtime, "create_database_engine", full_engine)
    for name in Settings.model_fields:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    monkeypatch.chdir(tmp_path)
    lines = tmp_path / "jobs.jsonl"
    payload = {"fail_times": 1, "message": "x" * 1000}
    lines.write_text("".join(json.dumps(payload) + "\n" for _ in range(200)), encoding="utf-8")
    monkeypatch.setattr(
        sys,
        "argv",
        ["dominus", "enqueue", "diag.fail", "--diagnostic-jobs", "--from-file", str(lines)],
    )
    caplog.set_level(logging.WARNING, logger="dominus.cli")
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    stderr = capsys.readouterr().err
    assert stderr.splitlines()[-1] == (
        "error: the database is full: no space left on its disk (or its size limit reached)"
    ), stderr
    assert "sqlalche.me" not in stderr
    assert any("database or disk is full" in record.getMessage() for record in caplog.records)
