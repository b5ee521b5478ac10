"""The PostgreSQL server the benchmark runs on: fresh databases per run, queries, settings, and
the CPU time its processes use.

Every database this benchmark creates is named `dominus_bench_<pid>_<name>` and dropped again
(`DROP DATABASE ... WITH (FORCE)`, only ever for names it created itself).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy.engine import make_url

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432"

# Settings printed with the report: the ones that move queue throughput and durability.
REPORTED_SETTINGS = (
    "autovacuum",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "shared_buffers",
    "max_connections",
)


class PgServer:
    def __init__(self, url: str) -> None:
        parsed = make_url(url)
        if parsed.get_backend_name() != "postgresql":
            raise ValueError(f"--pg-url must be a postgresql:// URL, got {url!r}")
        self._base = parsed.set(drivername="postgresql")
        self.prefix = f"dominus_bench_{os.getpid()}"
        self._created: list[str] = []
        self._counter = 0
        self._postmaster: int | None = None
        self._postmaster_known = False

    # --- addresses -----------------------------------------------------------------------
    def url(self, database: str) -> str:
        """libpq URL of `database` (psycopg, asyncpg, procrastinate and pgqueuer take it)."""
        return self._base.set(database=database).render_as_string(hide_password=False)

    def sqlalchemy_url(self, database: str) -> str:
        return self.url(database).replace("postgresql://", "postgresql+psycopg://", 1)

    # --- databases -----------------------------------------------------------------------
    def _admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url("postgres"), autocommit=True)

    def new_name(self, label: str) -> str:
        self._counter += 1
        return f"{self.prefix}_{self._counter}_{label}"

    def create(self, label: str, template: str | None = None, *, file_copy: bool = False) -> str:
        """A new database (copied from `template` if given); returns its name."""
        name = self.new_name(label)
        sql = f'CREATE DATABASE "{name}"'
        if template is not None:
            sql += f' TEMPLATE "{template}"'
        if file_copy:
            # WAL_LOG (the default) writes every block of the template to the WAL: slow for the
            # big prefilled template. FILE_COPY copies the files (and checkpoints).
            sql += " STRATEGY = FILE_COPY"
        with self._admin() as admin:
            admin.execute(sql)
        self._created.append(name)
        return name

    def drop(self, name: str) -> None:
        if name not in self._created:
            raise ValueError(f"refusing to drop {name!r}: not created by this benchmark")
        with self._admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._created.remove(name)

    def drop_all(self) -> None:
        for name in list(reversed(self._created)):
            try:
                self.drop(name)
            except psycopg.Error as error:
                print(f"warning: could not drop database {name}: {error}", flush=True)

    # --- queries -------------------------------------------------------------------------
    def connect(self, database: str) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(database), autocommit=True)

    def query(self, database: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.connect(database) as connection:
            return connection.execute(sql, params).fetchall()

    def vacuum_analyze(self, database: str) -> None:
        with self.connect(database) as connection:
            connection.execute("VACUUM (ANALYZE)")

    # --- CPU ---------------------------------------------------------------------------
    def cpu_seconds(self) -> float | None:
        """CPU time the server has used so far (None if it does not run on this machine)."""
        if not self._postmaster_known:
            self._postmaster = postmaster_pid(self)
            self._postmaster_known = True
        return postgres_cpu_seconds(self._postmaster)

    def cpu_since(self, before: float | None) -> float | None:
        after = self.cpu_seconds()
        return None if before is None or after is None else after - before

    # --- description ---------------------------------------------------------------------
    def version(self) -> str:
        with self._admin() as admin:
            row = admin.execute("SELECT version()").fetchone()
        return str(row[0]) if row else "unknown"

    def settings(self) -> str:
        with self._admin() as admin:
            values = [
                f"{name}={admin.execute(f'SHOW {name}').fetchone()[0]}"  # type: ignore[index]
                for name in REPORTED_SETTINGS
            ]
        return ", ".join(values)


# --- CPU accounting --------------------------------------------------------------------------
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (field 3 onwards)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def postmaster_pid(server: PgServer) -> int | None:
    """The PID of the server's postmaster, if it runs on this machine (the parent of our own
    backend); None otherwise."""
    # Read the backend's parent while its connection is open: once it closes, the backend
    # exits, and reading it afterwards raced that exit (the CPU tables of earlier runs came out
    # empty: the PID was cached as unknown).
    with server.connect("postgres") as connection:
        row = connection.execute("SELECT pg_backend_pid()").fetchone()
        fields = _stat(int(row[0])) if row else None
    if fields is None:
        return None
    parent = int(fields[1])
    parent_fields = _stat(parent)
    return parent if parent_fields is not None else None


def postgres_cpu_seconds(postmaster: int | None) -> float | None:
    """CPU time (user + system) used so far by one PostgreSQL server: its postmaster, every
    live child of it (backends, background workers) and the children it has already reaped
    (their time is added to the postmaster's cutime/cstime). Compare two readings around a
    measurement. Other clients of the same server count too."""
    if postmaster is None:
        return None
    own = _stat(postmaster)
    if own is None:
        return None
    # utime, stime, cutime, cstime are fields 14-17 (1-based), i.e. 11-14 here.
    total = sum(int(value) for value in own[11:15])
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / _TICKS


class CpuSampler:
    """Samples, every call to `sample()`, the CPU time used so far by some processes (the
    workers) and by the PostgreSQL server, with the wall-clock time. `window()` then gives the
    CPU each used between two wall-clock instants (e.g. the first job start and the last job
    end read from the database), interpolating between samples, so that process start-up and
    shut-down do not count."""

    def __init__(self, server: PgServer, interval: float = 0.05) -> None:
        self.server = server
        self.interval = interval
        self.pids: list[int] = []
        self._seen: dict[int, float] = {}  # last reading per pid: exited ones keep theirs
        self._samples: list[tuple[float, float, float]] = []
        self._last = 0.0

    def sample(self, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        for pid in self.pids:
            fields = _stat(pid)
            if fields is not None:
                used = (int(fields[11]) + int(fields[12])) / _TICKS
                self._seen[pid] = max(used, self._seen.get(pid, 0.0))
        workers = sum(self._seen.get(pid, 0.0) for pid in self.pids)
        database = self.server.cpu_seconds()
        if database is None:
            return
        self._samples.append((now, workers, database))

    def window(self, start: float, end: float) -> tuple[float, float, float] | None:
        """(worker CPU, PostgreSQL CPU, seconds) between the epoch times `start` and `end`;
        None without samples around both."""
        if len(self._samples) < 2 or end <= start:
            return None
        if start < self._samples[0][0] or end > self._samples[-1][0]:
            return None
        first, last = self._at(start), self._at(end)
        return last[0] - first[0], last[1] - first[1], end - start

    def _at(self, moment: float) -> tuple[float, float]:
        for (t0, w0, d0), (t1, w1, d1) in zip(self._samples, self._samples[1:], strict=False):
            if t0 <= moment <= t1:
                share = (moment - t0) / (t1 - t0) if t1 > t0 else 0.0
                return w0 + share * (w1 - w0), d0 + share * (d1 - d0)
        return self._samples[-1][1], self._samples[-1][2]
