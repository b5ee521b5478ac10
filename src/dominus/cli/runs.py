"""`dominus runs ...`: follow, list and inspect pipeline runs."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from dominus.cli.candidate_tables import dropped_table, listing_table
from dominus.cli.csv_file import write_text_file
from dominus.cli.output import console, print_json, print_model, short_time
from dominus.cli.pipeline_output import (
    DEFAULT_TOP,
    OptionError,
    parse_top,
    print_run,
    report_run,
    tier_candidates,
    wait_for_run,
)
from dominus.cli.runtime import open_runtime
from dominus.pipeline.documents import (
    PRUNED,
    RunOut,
    RunSummaryOut,
    effective_status,
    job_of_run,
    job_status,
)
from dominus.pipeline.listing import ListingQuery, candidate_listing, listing_documents
from dominus.pipeline.run_export import candidates_csv
from dominus.pipeline.store import PipelineStore

app = typer.Typer(help="Follow and inspect pipeline runs.", no_args_is_help=True)
DEFAULT_LIMIT = 100  # rows `runs candidates` prints without --limit (a CSV export has them all)


@app.command("wait")
def wait(
    run_id: int = typer.Argument(..., help="The run id."),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        min=0,
        help="Give up after seconds (counted from now, even while the "
        "run still waits for a worker).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the run as JSON at the end."),
) -> None:
    """Follow a run stage by stage until it ends. Exit code: 0 success, 1 failed or degraded,
    3 cancelled, 124 timed out."""
    runtime = open_runtime()
    runs = PipelineStore(runtime.engine)
    finished = wait_for_run(runs, runtime.store, run_id, timeout)
    raise typer.Exit(
        report_run(runs, finished, job_of_run(runtime.store, finished), as_json=as_json)
    )


@app.command("list")
def list_runs(
    limit: int = typer.Option(20, "--limit", min=1, max=10_000),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
) -> None:
    """Runs, newest first."""
    runtime = open_runtime(read_only=True)
    runs = PipelineStore(runtime.engine).list_runs(limit=limit)
    listed = [RunSummaryOut.of(run, job_of_run(runtime.store, run)) for run in runs]
    if as_json:
        print_model(listed)
        return
    table = Table("run", "job", "status", "degraded", "providers", "created", "recommended")
    for run, summary in zip(runs, listed, strict=True):
        table.add_row(
            str(run.id),
            _job_cell(run.job_id, summary.job_status),
            summary.status,
            "yes" if run.degraded else "",
            run.providers,
            short_time(run.created_at),
            str((run.summary or {}).get("recommended", "-")),
        )
    console.print(table)


@app.command("show")
def show(
    run_id: int = typer.Argument(..., help="The run id."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """A run: its status, stages, summary, recommendations, speculative names and rejections."""
    runtime = open_runtime(read_only=True)
    runs = PipelineStore(runtime.engine)
    run = runs.get_run(run_id)
    job = job_of_run(runtime.store, run)
    if as_json:
        print_model(RunOut.of(run, job))
        return
    recommended, speculative = tier_candidates(runs, run, DEFAULT_TOP)
    print_run(run, effective_status(run, job), recommended, speculative)
    if job_status(run, job) == PRUNED:
        console.print(
            f"  job {run.job_id}: pruned (finished jobs are deleted after JOB_RETENTION_DAYS; "
            "the run is the record)",
            markup=False,
        )
    for stage, report in run.stages.items():
        line = f"  {stage}: {report.get('status')} ({report.get('total')} in"
        line += f" {report.get('seconds', '-')} s)"
        if report.get("reason"):
            line += f" — {report['reason']}"
        console.print(line, markup=False)


@app.command("candidates")
def candidates(
    run_id: int = typer.Argument(..., help="The run id."),
    recommended: bool = typer.Option(False, "--recommended", help="Only recommended ones."),
    include_dropped: bool = typer.Option(
        False,
        "--all",
        help="Every candidate: also those dropped before scoring (invalid input, DNS, RDAP, "
        "a stage over budget), each with its stage and reason.",
    ),
    top: str | None = typer.Option(
        None, "--top", metavar="K", help="Only the first K of the ranking (K >= 1)."
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, max=100_000, help="At most N rows (default 100; --csv: all)."
    ),
    csv_path: Path | None = typer.Option(
        None,
        "--csv",
        metavar="PATH",
        help="Write a CSV file (UTF-8, BOM): the columns a person sorts by, rounded.",
    ),
    all_columns: bool = typer.Option(
        False, "--all-columns", help="With --csv: every field of the JSON, unrounded."
    ),
    force: bool = typer.Option(False, "--force", help="With --csv: overwrite an existing file."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
) -> None:
    """The run's candidates in ranking order: recommended by expected profit, then speculative,
    then rejected (then, with --all, those that never got a score), each with its tier or
    stage and the reason."""
    if csv_path is not None and as_json:
        raise OptionError("--csv and --json exclude each other")
    if force and csv_path is None:
        raise OptionError("--force goes with --csv")
    if all_columns and csv_path is None:
        raise OptionError("--all-columns goes with --csv")
    top_k = parse_top(top)
    runs = PipelineStore(open_runtime(read_only=True).engine)
    run = runs.get_run(run_id)
    default_limit = None if csv_path is not None else DEFAULT_LIMIT
    query = ListingQuery(
        recommended_only=recommended,
        include_dropped=include_dropped,
        top=top_k,
        limit=limit if limit is not None else default_limit,
    )
    if csv_path is not None:
        export = candidates_csv(
            lambda: candidate_listing(runs, run, query), all_columns=all_columns
        )
        write_text_file(csv_path, export.chunks(), force=force)
        console.print(f"wrote {export.rows} candidates to {csv_path}", markup=False)
        return
    documents = listing_documents(runs, run, query)
    if as_json:
        print_json(list(documents))
        return
    scored = [document for document in documents if "tier" in document]
    dropped = [document for document in documents if "tier" not in document]
    if scored or not dropped:
        console.print(listing_table(scored, f"Run {run_id}"))
    if dropped:
        console.print(dropped_table(dropped, f"Run {run_id}: not scored"))


def _job_cell(job_id: int | None, status: str | None) -> str:
    if job_id is None:
        return "-"
    return f"{job_id} (pruned)" if status == PRUNED else str(job_id)
