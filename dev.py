#!/usr/bin/env python3
"""Set up and run DOMINUS on a fresh machine that has only Python 3.11+.

    python3 dev.py demo     set up, migrate the default SQLite database, run the pipeline on the
                            bundled SAMPLE data (offline, no network) and print recommendations
    python3 dev.py test     set up (with test tools); run lint, type checks and the whole suite
    python3 dev.py bench    set up a separate benchmark environment (with huey); run bench/run.py
    python3 dev.py lock     regenerate the pinned lock files from pyproject.toml
    python3 dev.py docs     build the documentation site (MkDocs) into ./site; open site/index.html
    python3 dev.py valuation-model
                            refit the bundled value model from ../shared/data (when it is
                            there) and the compiled public sales: bench/valuation_fit.py

Each environment is a virtualenv inside the checkout, installed from a pinned lock file and
reinstalled only when that lock file changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
LOCKS = ROOT / "requirements"
LINTED = ("src", "tests", "bench", "docs/hooks", "dev.py")


def _run(*command: str | Path, env: dict[str, str] | None = None) -> None:
    printable = " ".join(str(part) for part in command)
    print(f"+ {printable}", flush=True)
    completed = subprocess.run([str(part) for part in command], cwd=ROOT, env=env, check=False)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def _environment(name: str, lock_files: list[str]) -> Path:
    """Create (or reuse) the virtualenv `name` with exactly the pinned packages installed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this script runs on whatever python3 is
        sys.exit("DOMINUS needs Python 3.11 or newer; run this script with python3.11")
    env_dir = ROOT / name
    python = env_dir / "bin" / "python"
    stamp = env_dir / ".installed-locks"
    digest = hashlib.sha256()
    for lock in lock_files:
        digest.update((LOCKS / lock).read_bytes())
    digest.update((ROOT / "pyproject.toml").read_bytes())
    wanted = digest.hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if not python.exists():
        print(f"creating virtualenv {env_dir}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    requirement_args: list[str | Path] = []
    for lock in lock_files:
        requirement_args += ["-r", LOCKS / lock]
    _run(python, "-m", "pip", "install", "--quiet", *requirement_args)
    _run(python, "-m", "pip", "install", "--quiet", "--no-deps", "-e", ROOT)
    stamp.write_text(wanted)
    return python


def demo(args: list[str]) -> None:
    python = _environment(".venv", ["runtime.lock"])
    dominus = python.parent / "dominus"
    _run(dominus, "db", "upgrade")
    _run(dominus, "run", "--sample", "--sync", *args)


def _ensure_postgres() -> None:
    """The suite needs PostgreSQL at 127.0.0.1:5432. Start the local cluster if it is installed
    but down; if there is none, the PostgreSQL tests fail and say so (they never skip)."""
    if shutil.which("pg_isready") is None or shutil.which("pg_ctlcluster") is None:
        print("note: no local PostgreSQL tools found; PostgreSQL tests will fail", flush=True)
        return
    ready = subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432"], check=False)
    if ready.returncode == 0:
        return
    versions = sorted(Path("/etc/postgresql").glob("*"))
    if versions:
        command = ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1].name, "main", "start"]
        subprocess.run(command, check=False)


def test(args: list[str]) -> None:
    _ensure_postgres()
    python = _environment(".venv", ["runtime.lock", "dev.lock"])
    bin_dir = python.parent
    _run(bin_dir / "ruff", "check", *LINTED)
    _run(bin_dir / "ruff", "format", "--check", *LINTED)
    # mypy takes about a minute of one core in a fresh clone (it has no cache yet), while the
    # suite leaves the cores idle much of its time (it waits on worker subprocesses, servers
    # and the database): mypy runs beside the suite, and its report follows the suite's.
    with _Beside("mypy", bin_dir / "mypy") as mypy:
        # Every import points down the floors (the contract in pyproject.toml).
        _run(bin_dir / "lint-imports")
        # The suite starts hundreds of `dominus` subprocesses. Where PYTHONDONTWRITEBYTECODE is
        # set (as on our CI machines) none of them saves its bytecode, so each compiled the
        # package's ~250 modules again (a quarter of a CLI call's 1.8 s); compileall writes it
        # regardless, and a later edit only makes Python ignore the stale file.
        _run(python, "-m", "compileall", "-q", "src")
        suite = _call(python, "-m", "pytest", *_parallel(args), *args)
    # The suite's exit status, or mypy's where only mypy failed.
    sys.exit(suite or mypy.returncode)


def _call(*command: str | Path) -> int:
    """Run `command` (printed first) and return its exit status."""
    print(f"+ {' '.join(str(part) for part in command)}", flush=True)
    return subprocess.run([str(part) for part in command], cwd=ROOT, check=False).returncode


class _Beside:
    """A command run in the background, its output kept in a file and printed, with its exit
    status, when the block ends (however it ends: a failing step exits from inside it)."""

    def __init__(self, name: str, *command: str | Path) -> None:
        self.name = name
        self.command = [str(part) for part in command]
        self.returncode = 0

    def __enter__(self) -> _Beside:
        print(
            f"+ {' '.join(self.command)} (beside what follows; its report comes after)", flush=True
        )
        self._output = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            self.command, cwd=ROOT, stdout=self._output, stderr=subprocess.STDOUT
        )
        return self

    def __exit__(self, *_exc: object) -> None:
        self.returncode = self._process.wait()
        self._output.seek(0)
        print(f"+ {self.name}, run beside the steps above, exited {self.returncode}:", flush=True)
        sys.stdout.buffer.write(self._output.read())
        sys.stdout.flush()
        self._output.close()
        if self.returncode != 0:
            print(f"{self.name} failed (above)", flush=True)


def _parallel(args: list[str]) -> list[str]:
    """Spread the suite over one pytest-xdist process more than the machine has cores (at most
    five) unless the arguments choose. Much of the suite waits on worker subprocesses, servers
    and the database: with one process per core the cores were busy about half the time, and
    a third process on two cores took a quarter off the wall time of a wait-heavy share of the
    suite (e2e, contract and dashboard tests: 485 s to 356 s, the same CPU time). A fourth took
    a little more off, but one of its two runs on the loaded machine had a test fail: four
    processes is left to measure on an idle one. `-n 0` runs it in one process. Work
    stealing: a process that runs out of tests takes some of another's, so the end of the run
    is not one process finishing the slow e2e tests alone."""
    chosen = any(arg.startswith(("-n", "--numprocesses", "--dist")) for arg in args)
    if chosen or "no:xdist" in args:
        return []
    return ["-n", str(min(5, (os.cpu_count() or 1) + 1)), "--dist", "worksteal"]


def bench(args: list[str]) -> None:
    python = _environment(".venv-bench", ["runtime.lock", "bench.lock"])
    _run(python, ROOT / "bench" / "run.py", *args)


def lock(_args: list[str]) -> None:
    """Regenerate the lock files (needs network access to PyPI)."""
    tools = _environment(".venv-lock", ["tools.lock"])
    compile_cmd = [
        tools.parent / "pip-compile",
        "--quiet",
        "--strip-extras",
        "--no-header",
        "--no-emit-index-url",
        "--no-emit-find-links",
    ]
    _run(*compile_cmd, "--output-file", LOCKS / "runtime.lock", ROOT / "pyproject.toml")
    _run(
        *compile_cmd,
        "--extra",
        "dev",
        "--constraint",
        LOCKS / "runtime.lock",
        "--output-file",
        LOCKS / "dev.lock",
        ROOT / "pyproject.toml",
    )
    _run(
        *compile_cmd,
        "--constraint",
        LOCKS / "runtime.lock",
        "--output-file",
        LOCKS / "bench.lock",
        LOCKS / "bench.in",
    )


def docs(args: list[str]) -> None:
    """The site the test suite builds too (tests/docs/test_site.py), here into ./site."""
    python = _environment(".venv", ["runtime.lock", "dev.lock"])
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    _run(python, "-m", "mkdocs", "build", "--strict", "--site-dir", ROOT / "site", *args, env=env)


def valuation_model(args: list[str]) -> None:
    """Refit src/dominus/valuation/data/model.json (exit 2 without ../shared/data)."""
    python = _environment(".venv", ["runtime.lock"])
    _run(python, ROOT / "bench" / "valuation_fit.py", *args)


COMMANDS = {
    "demo": demo,
    "test": test,
    "bench": bench,
    "lock": lock,
    "docs": docs,
    "valuation-model": valuation_model,
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(__doc__)
        sys.exit(2)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    COMMANDS[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
