"""A PostgreSQL instance of a test's own, to stop and start at will (server-fault tests).

`initdb` into a fresh directory under /tmp, started with `pg_ctl` on a free port, listening on
127.0.0.1 only (and on a Unix socket in that directory), trust authentication. initdb refuses to
run as root, so when the tests run as root every server command runs as the `postgres` OS user
(`runuser`), in a directory that user owns. `destroy()` stops the server (immediate mode, or a
SIGKILL of the postmaster it started) and removes the directory; it is safe to call in any state.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg

from tests.support.polling import free_port

BIN_DIR = Path(os.environ.get("DOMINUS_TEST_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))
OS_USER = "postgres"


class ThrowawayPostgres:
    def __init__(self) -> None:
        # Not pytest's tmp_path: the postgres user must be able to traverse every parent.
        self.base = Path(tempfile.mkdtemp(prefix="dominus-e2e-pg-", dir="/tmp"))
        self.base.chmod(0o755)
        self._as_root = os.geteuid() == 0
        if self._as_root:
            shutil.chown(self.base, OS_USER, OS_USER)
        self.data = self.base / "data"
        self.server_log = self.base / "server.log"
        self.command_log = self.base / "commands.log"
        self.port = free_port()
        self.settings: dict[str, str] = {}  # extra server settings (-c name=value) at start

    # --- commands ------------------------------------------------------------------------
    def _run(self, *command: str, timeout: float = 60) -> None:
        """Run a server binary (as the postgres user when we are root); its output goes to
        `command_log`, whose tail is in the error if it fails."""
        argv = [str(BIN_DIR / command[0]), *command[1:]]
        if self._as_root:
            argv = ["runuser", "-u", OS_USER, "--", *argv]
        with self.command_log.open("ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            # Files, not pipes: the postmaster pg_ctl leaves behind must not hold our pipes open.
            code = subprocess.run(
                argv,
                check=False,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                timeout=timeout,
            ).returncode
        if code != 0:
            raise RuntimeError(f"`{' '.join(argv)}` exited with {code}:\n{self.logs()}")

    def init(self) -> None:
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "--auth=trust",
            "--username=postgres",
            "--encoding=UTF8",
            "--no-sync",
        )

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.base}"
        )
        options += "".join(f" -c {name}={value}" for name, value in self.settings.items())
        self._run(
            "pg_ctl", "start", "-D", str(self.data), "-l", str(self.server_log), "-w", "-t", "60",
            "-o", options,
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`pg_ctl stop -m MODE`) and wait until it is gone."""
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", mode, "-w", "-t", "60")

    def create_database(self, name: str) -> str:
        """Create a database; returns its SQLAlchemy URL."""
        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def conninfo(self, database: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database} connect_timeout=5"

    # --- state and clean-up --------------------------------------------------------------
    def postmaster_pid(self) -> int | None:
        """The pid of this instance's postmaster while it runs (from postmaster.pid)."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        return None

    def logs(self) -> str:
        parts = []
        for path in (self.command_log, self.server_log):
            with contextlib.suppress(OSError):
                parts.append(f"----- {path}\n{path.read_text(errors='replace')[-8000:]}")
        return "\n".join(parts)

    def destroy(self) -> None:
        """Stop the server if it runs (immediate mode; failing that, SIGKILL its postmaster, a
        process this instance started) and remove its directory."""
        pid = self.postmaster_pid()
        if pid is not None:
            try:
                self.stop("immediate")
            except (RuntimeError, subprocess.TimeoutExpired):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and _alive(pid):
                    time.sleep(0.1)
        shutil.rmtree(self.base, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@contextlib.contextmanager
def running(instance: ThrowawayPostgres) -> Iterator[ThrowawayPostgres]:
    """`instance` initialised and started, destroyed afterwards whatever happened."""
    try:
        instance.init()
        instance.start()
        yield instance
    finally:
        instance.destroy()
