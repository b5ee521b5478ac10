"""`dominus run`: start a pipeline run from keywords, brandable names and closeout domains."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import typer
from pydantic import ValidationError

from dominus.cli.gate_waits import printed_waits
from dominus.cli.output import console, print_model
from dominus.cli.pipeline_output import (
    DEFAULT_TOP,
    parse_top,
    report_run,
    stage_progress_printer,
    wait_for_run,
)
from dominus.cli.runtime import open_runtime
from dominus.cli.signals import on_stop_signals
from dominus.errors import InvalidInputError
from dominus.pipeline.closeout_csv import read_closeout_csv
from dominus.pipeline.documents import RunQueuedOut, job_of_run
from dominus.pipeline.model import CloseoutDomain, RunInput
from dominus.pipeline.service import PipelineService
from dominus.pipeline.store import PipelineStore
from dominus.providers.offline import SAMPLE_INPUT_PATH
from dominus.providers.setup import SAMPLE


class RunInputError(InvalidInputError):
    """The run's input is invalid."""


def run(
    keywords: str | None = typer.Option(None, "-k", "--keywords", help="Comma-separated."),
    brandable: str | None = typer.Option(None, "-b", "--brandable", help="Comma-separated."),
    closeout: str | None = typer.Option(
        None, "-c", "--closeout", help="Comma-separated closeout domains."
    ),
    closeout_csv: Path | None = typer.Option(
        None,
        "--closeout-csv",
        help="CSV with the header domain, age, backlinks, wayback, price (comma-separated, all "
        "but domain optional); "
        "these names are bought at their listed price, not registered.",
    ),
    sample: bool = typer.Option(
        False,
        "--sample",
        help="The bundled SAMPLE input with the bundled SAMPLE data (no network); refused "
        "while one of your data files (TRADEMARK_MARKS_PATH, KEYWORD_DATA_PATH, "
        "COMPS_DATA_PATH) is set.",
    ),
    sync: bool = typer.Option(False, "--sync", help="Run here and now, without a worker."),
    wait: bool = typer.Option(False, "--wait", help="Enqueue, then follow it until it ends."),
    timeout: float | None = typer.Option(None, "--timeout", min=0, help="With --wait."),
    top: str | None = typer.Option(
        None,
        "--top",
        metavar="K",
        help="With --sync/--wait: show the K best recommendations (by expected profit) and "
        "the K best speculative names (default 20).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run the five-stage pipeline. By default it is enqueued (a worker runs it) and its ids are
    printed. Exit code with --sync/--wait: 0 success, 1 failed or degraded, 3 cancelled."""
    if sync and wait:
        raise RunInputError("--sync and --wait exclude each other")
    shown = parse_top(top) or DEFAULT_TOP
    run_input = build_input(keywords, brandable, closeout, closeout_csv, sample)
    runtime = open_runtime()
    service = PipelineService(
        runtime.settings, PipelineStore(runtime.engine), runtime.queue(), runtime.clock
    )
    providers = SAMPLE if sample else None
    if sync:
        stop = threading.Event()
        _stop_on_signals(stop)
        record = service.run_now(
            run_input,
            stop,
            stage_progress_printer(),
            providers=providers,
            gate=printed_waits(runtime.rate_gate),
        )
        raise typer.Exit(report_run(service.store, record, None, as_json=as_json, top=shown))
    record = service.submit(run_input, providers=providers)
    if not wait:
        if as_json:
            print_model(RunQueuedOut(run_id=record.id, job_id=record.job_id, status="pending"))
        else:
            console.print(f"run {record.id} enqueued as job {record.job_id}")
            console.print(f"follow it with: dominus runs wait {record.id}")
        return
    finished = wait_for_run(service.store, runtime.store, record.id, timeout)
    job = job_of_run(runtime.store, finished)
    raise typer.Exit(report_run(service.store, finished, job, as_json=as_json, top=shown))


def build_input(
    keywords: str | None,
    brandable: str | None,
    closeout: str | None,
    closeout_csv: Path | None,
    sample: bool,
) -> RunInput:
    if sample:
        if keywords or brandable or closeout or closeout_csv:
            raise RunInputError("--sample takes no other input")
        return RunInput.model_validate(json.loads(SAMPLE_INPUT_PATH.read_text(encoding="utf-8")))
    closeouts = read_closeout_csv(closeout_csv) if closeout_csv is not None else []
    try:
        closeouts = [CloseoutDomain(domain=name) for name in _split(closeout)] + closeouts
        return RunInput(keywords=_split(keywords), brandable=_split(brandable), closeout=closeouts)
    except ValidationError as error:
        raise RunInputError(f"invalid run input: {_problems(error)}") from None


def _problems(error: ValidationError) -> str:
    """`-k`'s third name: `keywords.2: String should have at most 300 characters`."""
    problems = []
    for issue in error.errors():
        where = ".".join(str(part) for part in issue["loc"])
        message = str(issue["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def _split(values: str | None) -> list[str]:
    return [part.strip() for part in (values or "").split(",") if part.strip()]


def _stop_on_signals(stop: threading.Event) -> None:
    """Ctrl-C / SIGTERM stop the in-process run at the next safe point (the run is cancelled)."""

    on_stop_signals(lambda _received, _count: stop.set())
