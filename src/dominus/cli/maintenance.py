"""`dominus maintenance ...`: back up, list backups, restore, vacuum and prune, in this process
(the BACKUP and PRUNE job types do the same work in a worker; ADR 0020).

Ctrl-C / SIGTERM stop a backup or a prune at its next safe point (a partial backup file is
removed; what a prune deleted stays deleted). A path outside BACKUP_DIR, a BACKUP_DIR that is a
file, pg_dump missing or too old, live workers at a restore, a backup to restore that does not
verify or is not a DOMINUS database of a known revision: one line, exit 2. A backup, restore or
integrity check that fails: one line, exit 1.
"""

from __future__ import annotations

import signal
import time
from datetime import timedelta

import typer
from rich.table import Table

from dominus.cli.output import console, errors, print_json, short_time
from dominus.cli.runtime import configure_logging, open_runtime
from dominus.cli.signals import on_stop_signals
from dominus.config import load_settings
from dominus.jobs.abort import AbortReason, AbortSignal
from dominus.maintenance.backup import BackupOptions, make_backup
from dominus.maintenance.files import list_backups
from dominus.maintenance.prune import PruneReport, prune, retention_from
from dominus.maintenance.restore import restore_backup
from dominus.maintenance.settings import backup_directory
from dominus.maintenance.vacuum import vacuum as vacuum_database

app = typer.Typer(
    help="Backups (with retention), restore, vacuum, and pruning of expired rows.",
    no_args_is_help=True,
)
JSON = typer.Option(False, "--json", help="Print JSON.")
PROGRESS_EVERY_SECONDS = 1.0


@app.command("backup")
def backup(
    list_only: bool = typer.Option(
        False, "--list", help="List the backups in BACKUP_DIR instead of making one."
    ),
    as_json: bool = JSON,
) -> None:
    """Back up the database into BACKUP_DIR (verified), then apply BACKUP_RETENTION_DAYS and
    BACKUP_KEEP_LAST. With --list: the backups there, oldest first."""
    if list_only:
        _list_backups(as_json)
        return
    # Not required to be migrated: a backup is what to take before `dominus db upgrade`.
    runtime = open_runtime(require_migrated=False)
    options = BackupOptions.from_settings(runtime.settings)
    result = make_backup(runtime.engine, options, runtime.clock(), _abort_on_signals())
    if as_json:
        print_json(result.document())
        return
    rows = "" if result.job_rows is None else f", jobs: {result.job_rows:,}"
    console.print(
        f"backup {result.path} ({_size(result.size_bytes)}{rows}), verified, in "
        f"{result.duration_seconds:.1f} s",
        markup=False,
    )
    for name in result.pruned_files:
        console.print(f"  deleted by the retention: {name}", markup=False)


def _list_backups(as_json: bool) -> None:
    settings = load_settings()
    configure_logging(settings.DOMINUS_LOG_LEVEL)
    directory = backup_directory(settings)
    backups = list_backups(directory)
    if as_json:
        print_json([backup.document() for backup in backups])
        return
    if not backups:
        console.print(f"no backups in {directory}", markup=False)
        return
    table = Table("name", "backend", "size", "taken (UTC)", title=str(directory))
    for found in backups:
        table.add_row(found.name, found.kind, _size(found.size), short_time(found.created_at))
    console.print(table)


@app.command("restore")
def restore(
    file: str = typer.Argument(
        ..., help="A backup in BACKUP_DIR: its name (as `backup --list` shows it) or its path."
    ),
    force: bool = typer.Option(
        False, "--force", help="Restore even though workers are alive (they keep working)."
    ),
    as_json: bool = JSON,
) -> None:
    """Replace the database by a backup. The database as it was is kept first (SQLite:
    `<database>.pre-restore`; PostgreSQL: a new dump in BACKUP_DIR)."""
    runtime = open_runtime(require_migrated=False, create=True)
    settings = runtime.settings
    result = restore_backup(
        runtime.engine,
        backup_directory(settings),
        file,
        runtime.clock(),
        live_after=timedelta(milliseconds=settings.JOB_MAX_RUNNING_AGE_MS),
        force=force,
        abort=_abort_on_signals(),
    )
    if as_json:
        print_json(result.document())
        return
    console.print(f"restored {result.restored.name}", markup=False)
    if result.pre_restore is not None:
        console.print(f"  the database as it was: {result.pre_restore}", markup=False)
    if result.needs_upgrade:
        console.print(
            f"  its schema is at revision {result.revision}, this version expects "
            f"{result.head}: run `dominus db upgrade`",
            markup=False,
        )


@app.command("vacuum")
def vacuum(as_json: bool = JSON) -> None:
    """SQLite: integrity check, then VACUUM (writers wait meanwhile: run it at a quiet time).
    PostgreSQL: VACUUM ANALYZE."""
    runtime = open_runtime(require_migrated=False)
    result = vacuum_database(runtime.engine, _abort_on_signals())
    if as_json:
        print_json(result.document())
        return
    checked = "integrity ok, " if result.integrity == "ok" else ""
    command = "VACUUM" if result.backend == "sqlite" else "VACUUM ANALYZE"
    console.print(
        f"{checked}{command} done: {_size(result.size_before)} → {_size(result.size_after)}",
        markup=False,
    )


@app.command("prune")
def prune_command(
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Count what would be deleted; delete nothing."
    ),
    as_json: bool = JSON,
) -> None:
    """Delete the rows past their retention (JOB_RETENTION_DAYS, DLQ_RETENTION_DAYS,
    PIPELINE_RUN_RETENTION_DAYS; 0 keeps them) and the job history's hours older than 8 days,
    in steps of PRUNE_BATCH_SIZE rows."""
    runtime = open_runtime()
    settings = runtime.settings
    last_shown = [0.0]

    def show_progress(rule: str, counts: dict[str, int]) -> None:
        if dry_run or time.monotonic() - last_shown[0] < PROGRESS_EVERY_SECONDS:
            return
        last_shown[0] = time.monotonic()
        errors.print(f"{rule}: {sum(counts.values()):,} rows deleted so far", markup=False)

    report = prune(
        runtime.engine,
        retention_from(settings),
        runtime.clock(),
        batch_size=settings.PRUNE_BATCH_SIZE,
        dry_run=dry_run,
        abort=_abort_on_signals(),
        on_progress=show_progress,
    )
    if as_json:
        print_json(report.document())
        return
    _print_report(report)


def _print_report(report: PruneReport) -> None:
    verb = "would delete" if report.dry_run else "deleted"
    table = Table("table", verb)
    for table_name, count in report.counts.items():
        table.add_row(table_name, f"{count:,}")
    console.print(table)
    kept = [name for name, days in report.retention.document().items() if days == 0]
    summary = f"{verb} {report.total:,} rows in {report.duration_seconds:.1f} s"
    if kept:
        summary += f" (kept for ever: {', '.join(kept)} = 0)"
    console.print(summary, markup=False)


def _abort_on_signals() -> AbortSignal:
    """An abort signal that Ctrl-C and SIGTERM set; a second signal stops the process."""
    abort = AbortSignal()

    def react(received: signal.Signals, _count: int) -> None:
        errors.print(f"{received.name}: stopping at the next safe point")
        abort.set(AbortReason.CANCELLED)

    on_stop_signals(react, interrupt_on_repeat=True)
    return abort


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} GiB"  # pragma: no cover
