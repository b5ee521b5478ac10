"""PostgreSQL: `pg_dump --format=custom` backups, their verification (`pg_restore --list`) and
their restore (`pg_restore --clean --if-exists --single-transaction`).

The client tools must be on PATH and at least as new as the server's major version: an older
pg_dump refuses a newer server, or worse, dumps it incompletely. Both are checked before anything
is written, with a message saying what to install. The password never appears on a command
line (other users can read those); it is handed over in PGPASSWORD. The tools' own output can
name hosts and users, so it goes to the log, not into the job's error (ADR 0011).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from pathlib import Path

from sqlalchemy import Engine, text

from dominus.db.errors import database_errors
from dominus.errors import BackupFailedError, MaintenanceError
from dominus.jobs.abort import AbortSignal

log = logging.getLogger("dominus.maintenance")

PG_DUMP = "pg_dump"
PG_RESTORE = "pg_restore"
_VERSION = re.compile(r"\(PostgreSQL\)\s+(\d+)")
# A table in `pg_restore --list`: "<id>; <oid> <oid> TABLE <schema> <name> <owner>".
_TABLE_ENTRY = re.compile(r"\d+; \d+ \d+ TABLE (?!DATA )(\S+) (\S+) ")
# Where `pg_restore --data-only` prints the rows of Alembic's version table.
_VERSION_ROWS = re.compile(r"COPY (?:\S+\.)?alembic_version \(version_num\) FROM stdin;")
END_OF_ROWS = "\\."
POLL_SECONDS = 0.2
STOP_GRACE_SECONDS = 5.0
VERSION_TIMEOUT_SECONDS = 30.0


def server_major_version(engine: Engine) -> int:
    with database_errors(), engine.connect() as connection:
        number = int(connection.execute(text("SHOW server_version_num")).scalar_one())
    return number // 10_000


def tool_major_version(executable: str) -> int:
    try:
        completed = subprocess.run(  # noqa: S603 - an argument list, no shell
            [executable, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise MaintenanceError(f"{executable} --version failed ({error})") from None
    match = _VERSION.search(completed.stdout)
    if completed.returncode != 0 or match is None:
        raise MaintenanceError(
            f"{executable} --version did not say its version: {completed.stdout.strip()!r}"
        )
    return int(match[1])


def checked_tool(name: str, server_major: int) -> str:
    """The path of the client tool `name`, checked against the server's major version.
    MaintenanceError when it is missing or older."""
    executable = shutil.which(name)
    if executable is None:
        raise MaintenanceError(
            f"{name} is not installed (not found on PATH): install the PostgreSQL client "
            f"tools, version {server_major} or newer, to back up or restore this database"
        )
    major = tool_major_version(executable)
    if major < server_major:
        raise MaintenanceError(
            f"{name} {major} ({executable}) is older than the server (PostgreSQL "
            f"{server_major}); install the client tools of version {server_major} or newer"
        )
    return executable


def connection_target(engine: Engine) -> tuple[str, dict[str, str]]:
    """A libpq URL for the engine's database without its password, and the environment that
    carries the password."""
    url = engine.url.set(drivername="postgresql", password=None)
    environment = dict(os.environ)
    if engine.url.password is not None:
        environment["PGPASSWORD"] = str(engine.url.password)
    return url.render_as_string(hide_password=False), environment


def run_tool(command: list[str], environment: dict[str, str], abort: AbortSignal, what: str) -> str:
    """Run a client tool to its end (or until `abort`, which stops it); its standard output.
    BackupFailedError when it fails; what it said goes to the log."""
    process = subprocess.Popen(  # noqa: S603 - an argument list, no shell
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=environment,
        text=True,
    )
    try:
        while True:
            try:
                stdout, stderr = process.communicate(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                if abort.is_set():
                    _stop(process)
                    abort.raise_if_set()
    finally:
        if process.poll() is None:
            _stop(process)
    if process.returncode != 0:
        for line in stderr.strip().splitlines():
            log.warning("%s: %s", what, line)
        raise BackupFailedError(
            f"{what} failed (exit {process.returncode}); what it said is in the log"
        )
    return stdout


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def dump(engine: Engine, target: Path, abort: AbortSignal) -> None:
    """`pg_dump --format=custom` of the engine's database into `target` (an existing, empty,
    owner-only file: pg_dump keeps its mode)."""
    executable = checked_tool(PG_DUMP, server_major_version(engine))
    url, environment = connection_target(engine)
    command = [executable, "--format=custom", "--no-password", f"--file={target}", url]
    run_tool(command, environment, abort, "pg_dump")


def verify_dump(path: Path, abort: AbortSignal, server_major: int) -> None:
    """The archive's table of contents can be read and holds the job table's data."""
    executable = checked_tool(PG_RESTORE, server_major)
    listing = run_tool([executable, "--list", str(path)], dict(os.environ), abort, "pg_restore")
    if not any(" TABLE DATA " in line and " job_queue " in line for line in listing.splitlines()):
        raise BackupFailedError(f"the dump {path.name} holds no data of the job table")


def dump_schema(
    path: Path, abort: AbortSignal, server_major: int
) -> tuple[set[str], list[str] | None]:
    """The names of the dump's tables and the rows of its alembic_version table (None when it
    has none), read from the archive alone: nothing is restored anywhere."""
    executable = checked_tool(PG_RESTORE, server_major)
    environment = dict(os.environ)
    listing = run_tool([executable, "--list", str(path)], environment, abort, "pg_restore")
    tables = {
        match[2] for line in listing.splitlines() if (match := _TABLE_ENTRY.match(line)) is not None
    }
    if "alembic_version" not in tables:
        return tables, None
    command = [executable, "--data-only", "--table=alembic_version", "--file=-", str(path)]
    script = run_tool(command, environment, abort, "pg_restore")
    return tables, _version_rows(script)


def _version_rows(script: str) -> list[str]:
    rows: list[str] = []
    copying = False
    for line in script.splitlines():
        if copying and line == END_OF_ROWS:
            copying = False
        elif copying:
            rows.append(line)
        elif _VERSION_ROWS.fullmatch(line):
            copying = True
    return rows


def restore(engine: Engine, path: Path, abort: AbortSignal) -> None:
    """Replace the engine's database's DOMINUS objects with the dump's, in one transaction:
    a failure changes nothing."""
    executable = checked_tool(PG_RESTORE, server_major_version(engine))
    url, environment = connection_target(engine)
    command = [
        executable,
        "--clean",
        "--if-exists",
        "--single-transaction",
        "--no-owner",
        "--no-password",
        f"--dbname={url}",
        str(path),
    ]
    run_tool(command, environment, abort, "pg_restore")
