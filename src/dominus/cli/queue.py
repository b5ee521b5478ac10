"""`dominus queue stats` and `dominus queues list|pause|resume`."""

from __future__ import annotations

from datetime import timedelta

import typer
from rich.table import Table

from dominus.cli.output import console, print_model
from dominus.cli.runtime import open_runtime
from dominus.jobs.documents import QueueOut, StatsWithWorkersOut
from dominus.jobs.model import QueueState
from dominus.jobs.queues import check_queue_name

app = typer.Typer(help="The queue as a whole.", no_args_is_help=True)
queues_app = typer.Typer(help="Named queues: list, pause, resume.", no_args_is_help=True)


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
    console.print(_queue_table(queue_stats.queues))
    console.print(f"workers alive: {queue_stats.workers_alive}")
    for worker in workers:
        console.print(f"  {worker.id} (concurrency {worker.concurrency})")


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _queue_table(states: list[QueueState]) -> Table:
    table = Table("queue", "state", "pending", "running", title="queues")
    for state in states:
        shown = "paused" if state.paused else "running"
        table.add_row(state.name, shown, str(state.pending), str(state.running))
    return table


@queues_app.command("list")
def list_queues(as_json: bool = typer.Option(False, "--json")) -> None:
    """Every queue with active jobs or a pause state, and `default`."""
    runtime = open_runtime(read_only=True)
    states = runtime.store.list_queues()
    if as_json:
        print_model([QueueOut.of(state) for state in states])
        return
    console.print(_queue_table(states))


@queues_app.command("pause")
def pause(
    name: str = typer.Argument(..., help="The queue's name."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Stop every worker, on every host, from claiming the queue's jobs; running ones finish."""
    check_queue_name(name)
    runtime = open_runtime()
    _print_state(runtime.store.pause_queue(name, runtime.clock()), as_json)


@queues_app.command("resume")
def resume(
    name: str = typer.Argument(..., help="The queue's name."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Let workers claim the queue's jobs again."""
    check_queue_name(name)
    runtime = open_runtime()
    _print_state(runtime.store.resume_queue(name, runtime.clock()), as_json)


def _print_state(state: QueueState, as_json: bool) -> None:
    if as_json:
        print_model(QueueOut.of(state))
        return
    shown = "paused" if state.paused else "running"
    console.print(f"queue {state.name}: {shown} ({state.pending} pending, {state.running} running)")
