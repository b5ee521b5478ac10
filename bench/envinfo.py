"""What the benchmark ran on: machine, versions, command line, date."""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import sqlite3
import subprocess
import sys
from datetime import datetime
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.lower().startswith(("model name", "hardware", "processor\t: ")) and ":" in line:
            value = line.split(":", 1)[1].strip()
            if value and not value.isdigit():
                return value
    return platform.processor() or platform.machine() or "unknown CPU"


def cores() -> str:
    logical = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else logical
    physical = set()
    core: dict[str, str] = {}
    for line in [*_read("/proc/cpuinfo").splitlines(), ""]:
        if not line.strip():
            if "core id" in core:
                physical.add((core.get("physical id", "0"), core["core id"]))
            core = {}
        elif ":" in line:
            key, value = line.split(":", 1)
            core[key.strip()] = value.strip()
    text = f"{logical} logical"
    if physical:
        text += f", {len(physical)} physical"
    if usable != logical:
        text += f", {usable} usable by this process"
    return text


def memory() -> str:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            kib = int(line.split()[1])
            return f"{kib / 1024 / 1024:.1f} GiB"
    return "unknown"


def operating_system() -> str:
    name = platform.system()
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            name = line.split("=", 1)[1].strip().strip('"')
    return f"{name}, kernel {platform.release()} ({platform.machine()})"


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def command_line() -> str:
    """`python3 dev.py bench ...` when started through dev.py, else this interpreter's argv."""
    own = shlex.join([sys.executable, *sys.argv])
    parent = _read(f"/proc/{os.getppid()}/cmdline").split("\0")
    parent = [part for part in parent if part]
    if len(parent) >= 3 and Path(parent[1]).name == "dev.py" and parent[2] == "bench":
        return f"{shlex.join(parent)}  (runs {own})"
    return own


def git_revision() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


def source_digest() -> str:
    """A short digest of src/, to notice the code under test changing during a run."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "src").rglob("*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def describe(*, sqlite: bool = True, postgresql: str | None = None) -> list[tuple[str, str]]:
    """The machine and versions; `postgresql` is the server's description (version and
    settings) when the PostgreSQL backend is measured."""
    items = [
        ("date", datetime.now().astimezone().isoformat(timespec="seconds")),
        ("command", command_line()),
        ("CPU", cpu_model()),
        ("cores", cores()),
        ("RAM", memory()),
        ("OS", operating_system()),
        ("load average at start", load_average()),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("SQLAlchemy", version("sqlalchemy")),
    ]
    if sqlite:
        items += [("SQLite", sqlite3.sqlite_version), ("huey", version("huey"))]
    if postgresql is not None:
        items += [
            ("PostgreSQL server", postgresql),
            ("psycopg", version("psycopg")),
            ("procrastinate", version("procrastinate")),
            ("pgqueuer", f"{version('pgqueuer')} (asyncpg {version('asyncpg')})"),
        ]
    items.append(
        ("DOMINUS", f"{version('dominus')}, git {git_revision()}, src digest {source_digest()}")
    )
    return items
