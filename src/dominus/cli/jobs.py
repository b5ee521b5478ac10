"""`dominus jobs ...`: list, show, wait for, cancel and retry jobs."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from dominus.cli.output import clip, console, errors, print_model, short_time
from dominus.cli.runtime import open_runtime
from dominus.cli.waiting import wait_until
from dominus.errors import InvalidJobOptionError
from dominus.jobs.client import is_text
from dominus.jobs.documents import JobOut, JobWithEventsOut, dumped
from dominus.jobs.model import Job, JobEvent, JobStatus

app = typer.Typer(help="Inspect and manage jobs.", no_args_is_help=True)

EXIT_FOR_STATUS = {JobStatus.COMPLETED: 0, JobStatus.FAILED: 1, JobStatus.CANCELLED: 3}
# How often `jobs wait` looks at the change watcher, and re-reads the job regardless.
WATCH_SECONDS = 0.02
REREAD_SECONDS = 1.0


@app.command("list")
def list_jobs(
    status: JobStatus | None = typer.Option(None, "--status", help="Only jobs in this state."),
    job_type: str | None = typer.Option(None, "--type", help="Only jobs of this type."),
    limit: int = typer.Option(50, "--limit", min=1, max=10_000, help="At most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array of jobs."),
) -> None:
    """List jobs, newest first."""
    if job_type is not None and not is_text(job_type):
        raise InvalidJobOptionError(f"--type is not UTF-8 text: {job_type!r}")
    store = open_runtime(read_only=True).store
    jobs = store.list_jobs(status=status, job_type=job_type, limit=limit)
    if as_json:
        print_model([JobOut.of(job) for job in jobs])
        return
    table = Table("id", "type", "status", "attempts", "priority", "created", "finished", "error")
    for job in jobs:
        table.add_row(
            str(job.id),
            job.job_type,
            job.status.value,
            f"{job.attempts}/{job.max_attempts}",
            str(job.priority),
            short_time(job.created_at),
            short_time(job.finished_at),
            clip(job.last_error, 40),
        )
    console.print(table)


@app.command("show")
def show(
    job_id: int = typer.Argument(..., help="The job id."),
    as_json: bool = typer.Option(False, "--json", help="Print the job and its events as JSON."),
) -> None:
    """Show a job: its fields, result, last error and history of events."""
    store = open_runtime(read_only=True).store
    job = store.get_job(job_id)
    events = store.job_events(job_id)
    if as_json:
        print_model(JobWithEventsOut.of_events(job, events))
        return
    _print_job(job, events)


def _print_job(job: Job, events: list[JobEvent]) -> None:
    fields = Table.grid(padding=(0, 2))
    for name, value in dumped(JobOut.of(job)).items():
        shown = json.dumps(value) if isinstance(value, (dict, list)) else value
        fields.add_row(f"[bold]{name}[/bold]", "-" if shown is None else str(shown))
    console.print(fields)
    if events:
        table = Table("at", "event", "attempt", "worker", "message", title="events")
        for event in events:
            table.add_row(
                short_time(event.at),
                event.kind.value,
                "-" if event.attempt is None else str(event.attempt),
                event.worker_id or "-",
                clip(event.message, 80),
            )
        console.print(table)


@app.command("wait")
def wait(
    job_id: int = typer.Argument(..., help="The job id."),
    timeout: float | None = typer.Option(None, "--timeout", min=0, help="Give up after seconds."),
) -> None:
    """Wait for a job to finish, showing its status and progress. Exit code: 0 completed,
    1 failed, 3 cancelled, 124 timed out."""
    runtime = open_runtime()
    store = runtime.store
    watcher = runtime.change_watcher()
    with errors.status(_status_line(store.get_job(job_id), 0.0)) as status:

        def show(line: str) -> None:
            status.update(line)
            if not errors.is_terminal:
                errors.print(line)

        job = wait_until(
            lambda: store.get_job(job_id),
            lambda job: job.status.is_terminal,
            timeout=timeout,
            still=lambda job: f"job {job_id}: still {job.status.value}",
            line=_status_line,
            show=show,
            changed=watcher.changed,
            poll_seconds=WATCH_SECONDS,
            reread_seconds=REREAD_SECONDS,
            show_last=False,
        )
    watcher.close()
    errors.print(_status_line(job, 0.0))
    if job.status is JobStatus.FAILED and job.last_error:
        errors.print(f"last error: {clip(job.last_error, 200)}")
    raise typer.Exit(EXIT_FOR_STATUS[job.status])


def _status_line(job: Job, elapsed: float) -> str:
    line = f"job {job.id} {job.job_type}: {job.status.value}"
    if job.status is JobStatus.RUNNING or job.attempts:
        line += f" (attempt {job.attempts}/{job.max_attempts})"
    if job.progress and not job.status.is_terminal:
        # Only `jobs wait` gets here: the listing commands keep the providers unimported.
        from dominus.providers.gate_waits import WAITING_FOR, describe_wait  # noqa: PLC0415

        fields = {key: value for key, value in job.progress.items() if key != WAITING_FOR}
        line += " " + ", ".join(f"{key}={value}" for key, value in fields.items())
        waiting = describe_wait(job.progress)
        if waiting is not None:
            line += f", {waiting}"
    return line if job.status.is_terminal else f"{line}  [{elapsed:.0f} s]"


@app.command("cancel")
def cancel(job_id: int = typer.Argument(..., help="The job id.")) -> None:
    """Cancel a job: a pending one at once, a running one as soon as its worker notices."""
    job = open_runtime().queue().cancel(job_id)
    if job.status is JobStatus.CANCELLED:
        console.print(f"job {job_id} cancelled")
    else:
        console.print(f"job {job_id}: cancel requested; its worker will abort it")


@app.command("retry")
def retry(job_id: int = typer.Argument(..., help="The job id.")) -> None:
    """Put a failed or cancelled job back to pending (same id, attempts reset)."""
    open_runtime().queue().retry(job_id)
    console.print(f"job {job_id} is pending again")
