"""`dominus worker`: run a worker until SIGTERM/SIGINT (or, with --burst, until nothing is due)."""

from __future__ import annotations

import logging
import os
import signal

import typer

from dominus.cli.embedded_scheduler import warn_if_no_scheduler
from dominus.cli.runtime import Runtime, open_runtime
from dominus.cli.signals import on_stop_signals
from dominus.errors import UnknownJobTypeError
from dominus.jobs.queues import parse_queue_option
from dominus.jobs.registry import HandlerRegistry
from dominus.jobs.worker import Worker

log = logging.getLogger("dominus.worker")


def worker(
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        max=256,
        metavar="N",
        help="Parallel jobs; setting: WORKER_CONCURRENCY",
    ),
    poll_interval_ms: int | None = typer.Option(
        None,
        "--poll-interval-ms",
        min=10,
        metavar="MS",
        help="Poll interval, at least 10 ms; setting: JOB_QUEUE_POLL_INTERVAL_MS",
    ),
    types: str | None = typer.Option(
        None, "--types", help="Comma-separated job types to run (default: every registered one)."
    ),
    diagnostic_jobs: bool = typer.Option(
        False,
        "--diagnostic-jobs",
        help="Register the diag.* job types; setting: DOMINUS_DIAGNOSTIC_JOBS",
    ),
    burst: bool = typer.Option(
        False, "--burst", help="Drain what is due, then exit 0 when nothing is left to do."
    ),
    queues: list[str] | None = typer.Option(
        None,
        "--queue",
        help=(
            "Take jobs from this queue only (repeatable; default: every queue). NAME=N: at most "
            "N of the worker's concurrency for it; the shares add up to at most --concurrency."
        ),
    ),
) -> None:
    """Run jobs. Stops gracefully on SIGTERM/SIGINT; a second signal exits at once."""
    shares = parse_queue_option(queues or [])
    runtime = open_runtime()
    registry = _registry(runtime, diagnostic_jobs, types)
    config = runtime.worker_config(concurrency, poll_interval_ms, burst=burst, queues=shares)
    the_worker = Worker(
        runtime.store,
        registry,
        config,
        clock=runtime.clock,
        watcher=runtime.change_watcher(),
        on_dead_letter=runtime.dead_letter_hook(),
        limiters=runtime.limiters,
    )
    _install_signal_handlers(the_worker)
    warn_if_no_scheduler(runtime.schedule_service(diagnostic_jobs=diagnostic_jobs))
    the_worker.run()
    raise typer.Exit(0)


def _registry(runtime: Runtime, diagnostic_jobs: bool, types: str | None) -> HandlerRegistry:
    registry = runtime.registry(diagnostic_jobs=diagnostic_jobs)
    if types:
        registry = registry.restricted_to(name.strip() for name in types.split(",") if name.strip())
    if len(registry) == 0:
        raise UnknownJobTypeError(
            "no job types to run: none are registered yet (pass --diagnostic-jobs for the diag.* "
            "types)"
        )
    return registry


def _install_signal_handlers(the_worker: Worker) -> None:
    def react(received: signal.Signals, count: int) -> None:
        if count > 1:
            log.warning("%s again: exiting at once; running jobs will be reclaimed", received.name)
            os._exit(128 + received)
        log.info(
            "%s received: shutting down gracefully (send it again to exit at once)", received.name
        )
        the_worker.request_shutdown()

    on_stop_signals(react)
