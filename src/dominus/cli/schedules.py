"""`dominus schedules ...`: list the schedules, run one now, enable or disable one."""

from __future__ import annotations

import typer
from rich.table import Table

from dominus.cli.output import console, print_model
from dominus.cli.runtime import open_runtime
from dominus.jobs.documents import EnqueuedJobOut
from dominus.jobs.scheduling.documents import ScheduleOut

app = typer.Typer(help="The cron schedules and their last jobs.", no_args_is_help=True)

NAME = typer.Argument(..., help="The schedule's name (see `dominus schedules list`).")
DIAGNOSTIC = typer.Option(
    False, "--diagnostic-jobs", help="Include the diagnostic schedule [DOMINUS_DIAGNOSTIC_JOBS]."
)


@app.command("list")
def list_schedules(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array of schedules."),
    diagnostic_jobs: bool = DIAGNOSTIC,
) -> None:
    """Every schedule: cron, zone, state, next and last fire, last job and its outcome."""
    service = open_runtime(read_only=True).schedule_service(diagnostic_jobs=diagnostic_jobs)
    schedules = service.documents()
    if as_json:
        print_model(schedules)
        return
    table = Table(
        "name", "cron", "zone", "state", "next fire", "last fire", "last job", "outcome", "skipped"
    )
    for schedule in schedules:
        table.add_row(
            schedule.name,
            schedule.cron or "off",
            schedule.timezone,
            _state(schedule),
            _time(schedule.next_fire_at),
            _time(schedule.last_fire_at),
            "-" if schedule.last_job_id is None else str(schedule.last_job_id),
            schedule.last_job_status or "-",
            str(schedule.skipped_count),
        )
    console.print(table)


@app.command("run")
def run(
    name: str = NAME,
    as_json: bool = typer.Option(False, "--json", help="Print the job as JSON."),
    diagnostic_jobs: bool = DIAGNOSTIC,
) -> None:
    """Enqueue the schedule's job now (not if one of its jobs is pending or running)."""
    runtime = open_runtime()
    result = runtime.schedule_service(diagnostic_jobs=diagnostic_jobs).run(name)
    if as_json:
        print_model(EnqueuedJobOut.enqueued(runtime.store.get_job(result.job_id), result.created))
    elif result.created:
        console.print(f"schedule {name}: job {result.job_id} enqueued")
    else:
        status = runtime.store.get_job(result.job_id).status.value
        console.print(f"schedule {name}: job {result.job_id} is already {status}; not enqueued")


@app.command("enable")
def enable(name: str = NAME, diagnostic_jobs: bool = DIAGNOSTIC) -> None:
    """Let the schedule fire again (from its next fire on), in every running scheduler."""
    _switch(name, True, diagnostic_jobs)


@app.command("disable")
def disable(name: str = NAME, diagnostic_jobs: bool = DIAGNOSTIC) -> None:
    """Stop the schedule from firing, in every running scheduler, until enabled again."""
    _switch(name, False, diagnostic_jobs)


def _switch(name: str, enabled: bool, diagnostic_jobs: bool) -> None:
    service = open_runtime().schedule_service(diagnostic_jobs=diagnostic_jobs)
    schedule = service.set_enabled(name, enabled)
    line = f"schedule {name} {'enabled' if enabled else 'disabled'}"
    if schedule.state == "inactive":
        line += f" (inactive: {schedule.inactive_reason})"
    elif schedule.next_fire_at:
        line += f"; next fire at {schedule.next_fire_at}"
    console.print(line)


def _state(schedule: ScheduleOut) -> str:
    if schedule.state == "inactive":
        disabled = "" if schedule.enabled else ", disabled"
        return f"inactive{disabled}: {schedule.inactive_reason}"
    return schedule.state


def _time(value: str | None) -> str:
    return "-" if value is None else value.replace("T", " ").split(".")[0].removesuffix("+00:00")
