"""The pipeline over 10,000 candidates with the offline providers: time per stage.

    .venv/bin/python bench/pipeline_bench.py [--candidates N] [--repeats N]
        [--backend sqlite|postgresql] [--output bench/RESULTS.md]

Candidates are invented, pronounceable names (a fixed seed, so every run scores the same names):
a third keywords, a third brandable names, a third closeout domains with facts. The offline
providers answer from the bundled sample files (in memory), so the figures measure DOMINUS
(generation, concurrency plumbing, scoring, the trademark gate, checkpoints and result writes),
not the network. Medians of the repeats are reported, with the machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg

import envinfo
from dominus.db.engine import create_database_engine
from dominus.jobs.clock import utc_now
from dominus.pipeline.model import STAGES, CloseoutDomain, RunInput
from dominus.pipeline.runner import PipelineOptions, PipelineRunner
from dominus.pipeline.store import PipelineStore
from dominus.providers.offline import offline_providers
from dominus.schema.migrate import upgrade

CONSONANTS = "bcdfghjklmnprstvz"
VOWELS = "aeiou"
TLDS = ("com", "com", "com", "io", "ai", "net", "co")


def invented_names(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    names: set[str] = set()
    while len(names) < count:
        syllables = rng.randint(2, 4)
        names.add("".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(syllables)))
    return sorted(names)


def bench_input(count: int) -> RunInput:
    names = invented_names(count)
    rng = random.Random(11)
    third = count // 3
    keywords = names[:third]
    brandable = [f"{name}.{rng.choice(TLDS)}" for name in names[third : 2 * third]]
    closeout = [
        CloseoutDomain(
            domain=f"{name}.{rng.choice(TLDS)}",
            age=rng.randint(1, 25),
            backlinks=rng.randint(0, 5000),
            wayback=rng.randint(0, 800),
        )
        for name in names[2 * third :]
    ]
    return RunInput(keywords=keywords, brandable=brandable, closeout=closeout)


def one_run(url: str, run_input: RunInput) -> dict[str, float]:
    engine = create_database_engine(url)
    upgrade(engine)
    store = PipelineStore(engine)
    run = store.create_run(run_input, "offline", utc_now())
    options = PipelineOptions(budget_max_seconds=3600, dns_concurrency=16, rdap_concurrency=4)
    runner = PipelineRunner(
        store, offline_providers(), options, clock=utc_now, stop=threading.Event()
    )
    started = time.perf_counter()
    done = runner.run(run.id)
    total = time.perf_counter() - started
    engine.dispose()
    if done.degraded:
        raise SystemExit(f"the run was degraded: {done.degraded_reasons}")
    figures = {stage.value: float(done.stages[stage.value]["seconds"]) for stage in STAGES}
    figures["results (save)"] = total - sum(figures.values())
    figures["total"] = total
    figures["recommended"] = float((done.summary or {}).get("recommended", 0))
    return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--postgres-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/dominus_bench"
    )
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    run_input = bench_input(args.candidates)
    runs = []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory() as directory:
            url = (
                f"sqlite:///{directory}/bench.db"
                if args.backend == "sqlite"
                else fresh_postgres(args.postgres_url, repeat)
            )
            runs.append(one_run(url, run_input))
        print(f"run {repeat + 1}: total {runs[-1]['total']:.2f} s", flush=True)
    report = render(args, runs)
    print(report)
    if args.output:
        with args.output.open("a", encoding="utf-8") as output:
            output.write("\n" + report)
    return 0


def fresh_postgres(url: str, repeat: int) -> str:
    base, _, name = url.rpartition("/")
    database = f"{name}_{repeat}"
    admin = base.replace("postgresql+psycopg", "postgresql") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{database}"')
        connection.execute(f'CREATE DATABASE "{database}"')
    return f"{base}/{database}"


def server_version(url: str) -> str:
    base = url.rpartition("/")[0].replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(f"{base}/postgres") as connection:
        row = connection.execute("SHOW server_version").fetchone()
    return f"PostgreSQL {row[0] if row else '?'}"


def render(args: argparse.Namespace, runs: list[dict[str, float]]) -> str:
    server = server_version(args.postgres_url) if args.backend == "postgresql" else None
    unrelated = {"huey", "procrastinate", "pgqueuer"}  # the queue benchmarks' comparisons
    machine = [
        (key, value) for key, value in envinfo.describe(postgresql=server) if key not in unrelated
    ]
    lines = [
        f"## {utc_now().isoformat(timespec='seconds')} — pipeline, {args.candidates:,} candidates,"
        f" offline providers, {args.backend}",
        "",
        *(f"- {key}: {value}" for key, value in machine),
        "",
        f"### Time per stage (median of {len(runs)} runs, seconds)",
        "",
        "| stage | seconds | per candidate (ms) |",
        "|---|---:|---:|",
    ]
    for key in [*(stage.value for stage in STAGES), "results (save)", "total"]:
        median = statistics.median(run[key] for run in runs)
        lines.append(f"| {key} | {median:.2f} | {1000 * median / args.candidates:.3f} |")
    recommended = statistics.median(run["recommended"] for run in runs)
    lines += ["", f"Recommended: {recommended:.0f} of {args.candidates:,}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
