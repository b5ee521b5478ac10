"""`dominus queue stats`."""

from __future__ import annotations

from datetime import timedelta

import typer
from rich.table import Table

from dominus.cli.output import console, print_model
from dominus.cli.runtime import open_runtime
from dominus.jobs.documents import StatsWithWorkersOut

app = typer.Typer(help="The queue as a whole.", no_args_is_help=True)


@app.command("stats")
def stats(as_json: bool = typer.Option(False, "--json")) -> None:
    """Counts by status and type, dead-letter size, latency (how long the oldest due job has
    waited), oldest pending age, live workers."""
    runtime = open_runtime(read_only=True)
    now = runtime.clock()
    # A worker is alive while its heartbeat is younger than the stale-job threshold.
    alive_since = now - timedelta(milliseconds=runtime.settings.JOB_MAX_RUNNING_AGE_MS)
    queue_stats = runtime.store.queue_stats(now, alive_since=alive_since)
    workers = runtime.store.list_workers(alive_since=alive_since)
    if as_json:
        print_model(StatsWithWorkersOut.with_workers(queue_stats, workers))
        return
    table = Table("type", *queue_stats.by_status, title="jobs")
    for job_type, counts in sorted(queue_stats.by_type.items()):
        table.add_row(job_type, *(str(counts.get(status, 0)) for status in queue_stats.by_status))
    table.add_row("[bold]all[/bold]", *(str(count) for count in queue_stats.by_status.values()))
    console.print(table)
    console.print(f"dead-letter entries: {queue_stats.dead_letter}")
    latency = _seconds(queue_stats.latency_seconds)
    console.print(f"latency (oldest due job waiting): {latency}")
    age = _seconds(queue_stats.oldest_pending_age_seconds)
    console.print(f"oldest pending job (scheduled and retrying included): {age}")
    console.print(f"workers alive: {queue_stats.workers_alive}")
    for worker in workers:
        console.print(f"  {worker.id} (concurrency {worker.concurrency})")


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"
