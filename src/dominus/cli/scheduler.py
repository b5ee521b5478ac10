"""`dominus scheduler`: enqueue the jobs of the schedules until SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import os
import signal

import typer

from dominus.cli.runtime import open_runtime
from dominus.cli.signals import on_stop_signals
from dominus.jobs.scheduling import Scheduler

log = logging.getLogger("dominus.scheduler")


def scheduler(
    diagnostic_jobs: bool = typer.Option(
        False,
        "--diagnostic-jobs",
        help="Register the diag.* job types (and the diag schedule) [DOMINUS_DIAGNOSTIC_JOBS].",
    ),
) -> None:
    """Enqueue each fire of each enabled schedule, exactly once however many schedulers run.
    Stops gracefully on SIGTERM/SIGINT; a second signal exits at once."""
    runtime = open_runtime()
    the_scheduler = runtime.schedule_service(diagnostic_jobs=diagnostic_jobs).scheduler()
    _install_signal_handlers(the_scheduler)
    the_scheduler.run()
    raise typer.Exit(0)


def _install_signal_handlers(the_scheduler: Scheduler) -> None:
    def react(received: signal.Signals, count: int) -> None:
        if count > 1:
            log.warning("%s again: exiting at once", received.name)
            os._exit(128 + received)
        log.info(
            "%s received: stopping after this tick (send it again to exit at once)", received.name
        )
        the_scheduler.request_shutdown()

    on_stop_signals(react)
