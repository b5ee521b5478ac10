"""`dominus dlq ...`: the dead-letter queue."""

from __future__ import annotations

from datetime import timedelta

import typer
from rich.table import Table

from dominus.cli.output import clip, console, print_model, short_time
from dominus.cli.runtime import open_runtime
from dominus.jobs.documents import DeadLetterOut

app = typer.Typer(help="Jobs that exhausted their attempts.", no_args_is_help=True)


@app.command("list")
def list_entries(
    include_requeued: bool = typer.Option(
        False, "--all", help="Include entries that were already requeued."
    ),
    limit: int = typer.Option(100, "--limit", min=1, max=10_000),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array of entries."),
) -> None:
    """List dead-letter entries, newest first."""
    store = open_runtime(read_only=True).store
    entries = store.list_dead_letters(include_requeued=include_requeued, limit=limit)
    if as_json:
        print_model([DeadLetterOut.of(entry) for entry in entries])
        return
    table = Table("id", "job", "type", "attempts", "failed", "requeued", "last error")
    for entry in entries:
        table.add_row(
            str(entry.id),
            str(entry.job_id),
            entry.job_type,
            str(entry.attempts),
            short_time(entry.failed_at),
            short_time(entry.requeued_at),
            clip(entry.last_error, 50),
        )
    console.print(table)


@app.command("show")
def show(
    entry_id: int = typer.Argument(..., help="The dead-letter entry id."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Show an entry with every attempt's error and traceback."""
    entry = open_runtime(read_only=True).store.get_dead_letter(entry_id)
    if as_json:
        print_model(DeadLetterOut.of(entry))
        return
    console.print(
        f"[bold]entry {entry.id}[/bold]: job {entry.job_id} ({entry.job_type}), "
        f"{entry.attempts} attempts, failed {short_time(entry.failed_at)}, "
        f"requeued {short_time(entry.requeued_at)}"
    )
    console.print(f"payload: {entry.payload}")
    for error in entry.errors:
        console.print(f"\n[bold]attempt {error.attempt}[/bold] at {short_time(error.at)}: ")
        console.print(error.message, markup=False)
        if error.traceback:
            console.print(error.traceback.rstrip(), markup=False)


@app.command("requeue")
def requeue(entry_id: int = typer.Argument(..., help="The dead-letter entry id.")) -> None:
    """Put the entry's job (same id) back to pending with its attempts reset."""
    job = open_runtime().queue().requeue_dead_letter(entry_id)
    console.print(f"job {job.id} is pending again")


@app.command("purge")
def purge(
    older_than_days: float | None = typer.Option(
        None,
        "--older-than-days",
        min=0,
        max=36_500,
        help="Only entries that failed more than N days ago.",
    ),
) -> None:
    """Delete dead-letter entries (the failed jobs themselves stay)."""
    runtime = open_runtime()
    cutoff = None
    if older_than_days is not None:
        cutoff = runtime.clock() - timedelta(days=older_than_days)
    removed = runtime.store.purge_dead_letters(cutoff)
    console.print(f"purged {removed} dead-letter entr{'y' if removed == 1 else 'ies'}")
