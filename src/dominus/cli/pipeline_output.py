"""Showing pipeline runs in a terminal: stage progress while waiting, recommendations after."""

from __future__ import annotations

import time
from typing import Any

import typer
from rich.table import Table

from dominus.cli.output import console, errors, print_json
from dominus.jobs.model import Job
from dominus.jobs.sql import SqlJobStore
from dominus.pipeline.documents import (
    candidate_document,
    effective_status,
    job_of_run,
    run_document,
)
from dominus.pipeline.model import RunStatus
from dominus.pipeline.stage_results import REGISTRATION
from dominus.pipeline.store import PipelineStore, RunRecord

EXIT_FAILED_OR_DEGRADED = 1
EXIT_CANCELLED = 3
EXIT_TIMED_OUT = 124
POLL_SECONDS = 0.25
SAMPLE_DATA_NOTICE = "SAMPLE DATA: offline providers and bundled sample figures, not market data"


def wait_for_run(
    runs: PipelineStore, jobs: SqlJobStore, run_id: int, timeout: float | None
) -> RunRecord:
    """Poll the run (and its job) until it ends, printing each change of stage and progress.
    The timeout applies from the start, even while the run still waits for a worker."""
    started = time.monotonic()
    last_line = ""
    while True:
        run = runs.get_run(run_id)
        job = job_of_run(jobs, run)
        status = effective_status(run, job)
        line = progress_line(run, job, status)
        if line != last_line:
            errors.print(line)
            last_line = line
        if status in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED):
            return run
        if timeout is not None and time.monotonic() - started >= timeout:
            errors.print(f"run {run_id}: still {status.value} after {timeout:g} s")
            raise typer.Exit(EXIT_TIMED_OUT)
        time.sleep(POLL_SECONDS)


def progress_line(run: RunRecord, job: Job | None, status: RunStatus) -> str:
    line = f"run {run.id}: {status.value}"
    progress = job.progress if job is not None and job.progress else None
    if status is RunStatus.RUNNING and progress and "stage" in progress:
        line += (
            f" — stage {progress.get('stage_number')}/{progress.get('stages')}"
            f" {progress['stage']} {progress.get('done')}/{progress.get('total')}"
        )
    return line


def stage_progress_printer() -> Any:
    """A progress callback for in-process runs: a line per stage and every 10 %."""
    shown: dict[str, int] = {}

    def show(stage: Any, number: int, done: int, total: int) -> None:
        tenth = (10 * done // total) if total else 10
        if shown.get(stage.value) == tenth:
            return
        shown[stage.value] = tenth
        errors.print(f"stage {number}/5 {stage.value}: {done}/{total}")

    return show


def report_run(
    runs: PipelineStore, run: RunRecord, job: Job | None, *, as_json: bool, limit: int = 20
) -> int:
    """Print the run's outcome and recommendations; return the exit code."""
    status = effective_status(run, job)
    if as_json:
        document = run_document(run, job)
        rows = runs.run_scores(run.id, recommended_only=True, limit=limit)
        document["recommendations"] = [candidate_document(row) for row in rows]
        print_json(document)
    else:
        print_run(runs, run, status, limit)
    if status is RunStatus.CANCELLED:
        return EXIT_CANCELLED
    if status is RunStatus.FAILED or run.degraded:
        return EXIT_FAILED_OR_DEGRADED
    return 0


def print_run(runs: PipelineStore, run: RunRecord, status: RunStatus, limit: int) -> None:
    summary = run.summary or {}
    if run.providers == "offline":
        console.print(f"[bold yellow]{SAMPLE_DATA_NOTICE}[/]")
    console.print(f"run {run.id}: {status.value}" + (" (DEGRADED)" if run.degraded else ""))
    for reason in run.degraded_reasons:
        console.print(f"  degraded: {reason}")
    if run.error:
        console.print(f"  error: {run.error}")
    if summary:
        console.print(
            f"  {summary.get('candidates', 0)} candidates ({summary.get('invalid', 0)} invalid, "
            f"{summary.get('duplicates', 0)} duplicates, "
            f"{summary.get('purchase_candidates', 0)} to buy from a listing); DNS available "
            f"{summary.get('dns', {}).get('available', 0)}; RDAP confirmed "
            f"{summary.get('rdap', {}).get('available', 0)}"
            f"{_sources(summary.get('availability_sources', {}))}; "
            f"scored {summary.get('scored', 0)}; "
            f"trademark {_counts(summary.get('trademark', {}))}; "
            f"recommended {summary.get('recommended', 0)}"
        )
    rows = runs.run_scores(run.id, recommended_only=True, limit=limit)
    if rows:
        console.print(candidates_table(rows, "Recommended"))
    elif status is RunStatus.COMPLETED:
        console.print("  nothing to recommend: conservative by design")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items()) or "-"


def _sources(counts: dict[str, int]) -> str:
    """ " (whois 2, rdap 5)" when a source other than RDAP confirmed names, else nothing."""
    return f" ({_counts(counts)})" if set(counts) - {"rdap"} else ""


def candidates_table(rows: list[dict[str, Any]], title: str) -> Table:
    """Whole-currency amounts (the estimates are not cent-accurate; --json has the cents), and
    every cell kept whole: on a narrow terminal the table wraps rather than cutting names."""
    cells = [
        [
            row["domain"],
            acquisition_cell(row["details"]),
            f"{row['expected_value']:,.0f}",
            f"{row['suggested_buy_max']:,.0f}",
            f"{row['suggested_list_price']:,.0f}",
            f"{row['weighted_score']:.3f}",
            f"{row['confidence']:.2f}",
            row["trademark_verdict"]
            + (f" ({row['trademark_mark']})" if row["trademark_mark"] else ""),
            row["details"].get("availability_source") or "-",
        ]
        for row in rows
    ]
    headings = (
        "domain",
        "acquire",
        "EV",
        "buy max",
        "list",
        "score",
        "conf.",
        "trademark",
        "confirmed by",
    )
    table = Table(title=title)
    for index, heading in enumerate(headings):
        widest = max([len(heading), *(len(cell[index]) for cell in cells)])
        numeric = heading not in ("domain", "acquire", "trademark", "confirmed by")
        table.add_column(
            heading, justify="right" if numeric else "left", no_wrap=True, min_width=widest
        )
    for cell in cells:
        table.add_row(*cell)
    return table


def acquisition_cell(details: dict[str, Any]) -> str:
    """A hand-registration reads "register"; a purchase "buy" and its listed price."""
    if details.get("acquisition", REGISTRATION) == REGISTRATION:
        return "register"
    price = details.get("listed_price")
    return "buy (no price)" if price is None else f"buy at {price:,.0f}"
