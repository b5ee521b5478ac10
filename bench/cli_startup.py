#!/usr/bin/env python3
"""How long `dominus queue stats`, `dominus jobs list` and `dominus --help` take as whole
processes, with hyperfine (Debian's `hyperfine` package), on a migrated SQLite database of 300
jobs (200 completed, 50 dead-lettered, 50 pending), beside the floor: Python alone and the
libraries every command imports.

    .venv/bin/python bench/cli_startup.py                      # this tree's src/
    .venv/bin/python bench/cli_startup.py --src before=/path/to/other/src --src after=src

Each `--src LABEL=DIR` runs the commands with PYTHONPATH=DIR (the venv's `dominus` script runs
whichever `dominus` package is first on the path). Prints a Markdown table: median wall time,
mean user and system CPU time of `--runs` runs after `--warmup`, and the load average before and
after (on a shared machine the wall times follow the load; the CPU times much less so).
`--instructions` adds each command's instruction count (valgrind's cachegrind, one run,
`PYTHONHASHSEED=0`): the measure the load does not move. Every source tree is byte-compiled
first, so that no run pays for compiling (an environment with PYTHONDONTWRITEBYTECODE=1 would
otherwise compile every module on every run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMANDS = ("queue stats", "jobs list", "--help")
FLOOR = {
    "python -c pass": "pass",
    "import sqlalchemy": "import sqlalchemy",
    "import typer": "import typer",
    "import pydantic_settings": "import pydantic_settings",
    "import rich.table": "import rich.table",
    "all four": "import sqlalchemy, typer, pydantic_settings, rich.table",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", default=[], help="LABEL=DIR (repeatable)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--instructions", action="store_true", help="count them with valgrind")
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        sys.exit("hyperfine is missing: apt-get install hyperfine")
    if args.instructions and shutil.which("valgrind") is None:
        sys.exit("valgrind is missing: apt-get install valgrind")
    sources = dict(entry.split("=", 1) for entry in args.src) or {
        "this tree": str(HERE.parent / "src")
    }
    for src in sources.values():
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", src], check=True, stdout=subprocess.DEVNULL
        )
    dominus = Path(sys.executable).with_name("dominus")
    rows: list[tuple[str, str, dict[str, float]]] = []
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as scratch:
        database_url = make_database(Path(scratch), dominus, next(iter(sources.values())))
        for label, src in sources.items():
            env = environment(src, database_url)
            for command in COMMANDS:
                rows.append(
                    (label, f"dominus {command}", measured(f"{dominus} {command}", env, args))
                )
        env = environment(next(iter(sources.values())), database_url)
        for label, code in FLOOR.items():
            rows.append(("floor", label, measured(f"{sys.executable} -c '{code}'", env, args)))
    print(f"load average after: {load_average()}\n")
    counted = " instructions (millions) |" if args.instructions else ""
    print(f"| code | command | median wall (s) | mean user (s) | mean system (s) |{counted}")
    print("|---|---|---:|---:|---:|" + ("---:|" if args.instructions else ""))
    for label, command, figures in rows:
        count = f" {figures['instructions'] / 1e6:,.0f} |" if args.instructions else ""
        print(
            f"| {label} | `{command}` | {figures['median']:.3f} | {figures['user']:.3f} "
            f"| {figures['system']:.3f} |{count}"
        )


def measured(command: str, env: dict[str, str], args: argparse.Namespace) -> dict[str, float]:
    figures = timed(command, env, args)
    if args.instructions:
        figures["instructions"] = instructions(command, env)
    return figures


def instructions(command: str, env: dict[str, str]) -> float:
    """The instructions one run of `command` executes (cachegrind, no cache simulation)."""
    valgrind = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
    ]
    finished = subprocess.run(
        [*valgrind, *shlex.split(command)],
        env=env | {"PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"I\s+refs:\s+([\d,]+)", finished.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output for {command}")
    return float(match.group(1).replace(",", ""))


def environment(src: str, database_url: str) -> dict[str, str]:
    inherited = {key: value for key, value in os.environ.items() if not key.startswith("DOMINUS")}
    return inherited | {"PYTHONPATH": str(Path(src).resolve()), "DATABASE_URL": database_url}


def make_database(scratch: Path, dominus: Path, src: str) -> str:
    """A migrated SQLite file with 200 completed, 50 dead-lettered and 50 pending jobs."""
    database_url = f"sqlite:///{scratch / 'bench.db'}"
    env = environment(src, database_url)

    def run(*args: str) -> None:
        subprocess.run([str(dominus), *args], env=env, cwd=scratch, check=True, capture_output=True)

    def lines(name: str, line: str, count: int) -> str:
        path = scratch / name
        path.write_text((line + "\n") * count, encoding="utf-8")
        return str(path)

    run("db", "upgrade")
    diagnostic = ("--diagnostic-jobs",)
    run("enqueue", "diag.noop", "--from-file", lines("noop.jsonl", "{}", 200), *diagnostic)
    failing = lines("fail.jsonl", '{"fail_times": 5, "message": "bench"}', 50)
    run("enqueue", "diag.fail", "--from-file", failing, "--max-attempts", "1", *diagnostic)
    run("worker", "--burst", "--concurrency", "4", *diagnostic)
    sleeping = lines("sleep.jsonl", '{"seconds": 0}', 50)
    run("enqueue", "diag.sleep", "--from-file", sleeping, *diagnostic)
    return database_url


def timed(command: str, env: dict[str, str], args: argparse.Namespace) -> dict[str, float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as export:
        subprocess.run(
            [
                "hyperfine",
                "-N",
                "--style",
                "none",
                "--warmup",
                str(args.warmup),
                "--runs",
                str(args.runs),
                "--export-json",
                export.name,
                command,
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        result = json.loads(Path(export.name).read_text(encoding="utf-8"))["results"][0]
    return {
        "median": statistics.median(result["times"]),
        "user": result["user"],
        "system": result["system"],
    }


def load_average() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
