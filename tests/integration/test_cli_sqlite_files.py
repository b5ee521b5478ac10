"""SQLite files as an operator meets them (ADR 0011): a mistyped path is refused instead of
being created, and a read-only database can still be read."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from dominus.config import Settings
from dominus.db.engine import create_database_engine
from dominus.jobs import HandlerRegistry, JobQueue, JobStatus, SqlJobStore
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.schema.migrate import head_revision
from tests.support.cli import run_in_process
from tests.support.polling import free_port, wait_until

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
    """Run `dominus` commands: in process, or side by side as subprocesses behind `prefix` (a
    command line that runs them as another user)."""
    if not prefix:
        env = dominus_env(database_url)
        return [Ran(args, *run_in_process(tuple(args), env, cwd)) for args in commands]
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


@pytest.fixture
def shared_directory() -> Iterator[Path]:
    """A directory the unprivileged user can reach (pytest's own temporary directories are
    private to their owner)."""
    directory = Path(tempfile.mkdtemp(prefix="dominus-read-only-"))
    yield directory
    directory.chmod(0o755)
    shutil.rmtree(directory)


def as_unprivileged_user() -> list[str]:
    """Run as `nobody` when the tests run as root: root ignores file permissions, so a chmod
    alone proves nothing there. As any other user, the chmod is enough."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_reading_commands_work_on_a_read_only_database(
    shared_directory: Path, migrated_sqlite_template: Path, journal: str
) -> None:
    """A WAL database whose file and directory are read-only (SQLite cannot make its -shm
    file), and one in rollback-journal mode (switching it to WAL would write): every one-shot
    reading command answers, and nothing is written."""
    path = shared_directory / "dominus.db"
    shutil.copyfile(migrated_sqlite_template, path)
    url = f"sqlite:///{path}"
    engine = create_database_engine(url)
    queue = JobQueue(SqlJobStore(engine), register_diagnostic_jobs(HandlerRegistry()))
    job_id = queue.enqueue_job("diag.noop").job_id
    engine.dispose()
    if journal == "delete":
        with contextlib.closing(sqlite3.connect(path)) as connection:
            connection.execute("PRAGMA journal_mode=DELETE")
    assert sorted(p.name for p in shared_directory.iterdir()) == ["dominus.db"]
    before = path.read_bytes()
    path.chmod(0o444)
    shared_directory.chmod(0o555)

    stats, listed, shown, dead, runs, current = run_all(
        shared_directory,
        url,
        ("queue", "stats", "--json"),
        ("jobs", "list", "--json"),
        ("jobs", "show", str(job_id), "--json"),
        ("dlq", "list", "--json"),
        ("runs", "list", "--json"),
        ("db", "current"),
        prefix=as_unprivileged_user(),
    )
    for ran in (stats, listed, shown, dead, runs, current):
        assert ran.code == 0, ran
        assert ran.stderr == "", ran
    assert json.loads(stats.stdout)["by_status"]["pending"] == 1
    assert [job["id"] for job in json.loads(listed.stdout)] == [job_id]
    assert json.loads(shown.stdout)["status"] == "pending"
    assert json.loads(dead.stdout) == []
    assert json.loads(runs.stdout) == []
    assert current.stdout.strip() == f"database: {head_revision()}; code expects: {head_revision()}"
    assert path.read_bytes() == before
    assert sorted(p.name for p in shared_directory.iterdir()) == ["dominus.db"]


@pytest.mark.parametrize("fate", ["deleted", "replaced"])
def test_a_worker_stops_when_its_database_file_is_deleted_or_replaced(
    tmp_path: Path, migrated_sqlite_template: Path, fate: str
) -> None:
    """Otherwise it goes on "completing" jobs into a file nobody will open again."""
    path = tmp_path / "dominus.db"
    shutil.copyfile(migrated_sqlite_template, path)
    engine = create_database_engine(f"sqlite:///{path}")
    store = SqlJobStore(engine)
    queue = JobQueue(store, register_diagnostic_jobs(HandlerRegistry()))
    job_id = queue.enqueue_job("diag.sleep", {"seconds": 60}).job_id
    stderr_path = tmp_path / "worker.stderr"
    # A subprocess: it runs on while the test deletes or replaces its database file.
    with stderr_path.open("w", encoding="utf-8") as stderr:
        worker = subprocess.Popen(
            [str(DOMINUS), "worker", "--poll-interval-ms", "50"],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            env=dominus_env(f"sqlite:///{path}"),
            cwd=tmp_path,
        )
    try:
        wait_until(lambda: store.get_job(job_id).status is JobStatus.RUNNING, 30, "the job to run")
        engine.dispose()
        if fate == "deleted":
            path.unlink()
        else:
            shutil.copyfile(migrated_sqlite_template, tmp_path / "other.db")
            (tmp_path / "other.db").replace(path)
        code = worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)
    output = stderr_path.read_text(encoding="utf-8")
    assert code == 1, output
    expected = f"the database file {path} was {fate}"
    assert any(" ERROR " in line and expected in line for line in output.splitlines()), output
    assert output.splitlines()[-1].startswith(f"error: {expected}"), output
