"""`dominus scheduler`: enqueue the jobs of the schedules until SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import os
import signal
from types import FrameType

import typer

from dominus.cli.runtime import open_runtime
from dominus.jobs.scheduling import Scheduler
from dominus.scheduling.service import ScheduleService

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
    the_scheduler = ScheduleService(runtime, diagnostic_jobs=diagnostic_jobs).scheduler()
    _install_signal_handlers(the_scheduler)
    the_scheduler.run()
    raise typer.Exit(0)


def _install_signal_handlers(the_scheduler: Scheduler) -> None:
    received: list[int] = []

    def handle(signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if received:
            log.warning("%s again: exiting at once", name)
            os._exit(128 + signum)
        received.append(signum)
        log.info("%s received: stopping after this tick (send it again to exit at once)", name)
        the_scheduler.request_shutdown()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
