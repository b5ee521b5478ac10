"""`dominus serve`: the HTTP API under uvicorn, optionally with a worker in the same process."""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType

import typer
import uvicorn

from dominus.cli.embedded_scheduler import EmbeddedScheduler, check_for_a_scheduler_soon
from dominus.cli.embedded_worker import EmbeddedWorker
from dominus.cli.runtime import open_runtime
from dominus.cli.signals import OffHandlerCall
from dominus.config import ApiTokens, api_tokens
from dominus.errors import ConfigurationError
from dominus.host_names import is_loopback

log = logging.getLogger("dominus.api")


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback by default)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535),
    with_worker: bool = typer.Option(
        False, "--with-worker", help="Also run a worker in this process (stopped together)."
    ),
    with_scheduler: bool = typer.Option(
        False, "--with-scheduler", help="Also run the scheduler in this process (stopped together)."
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, max=256, help="The embedded worker's [WORKER_CONCURRENCY]."
    ),
    diagnostic_jobs: bool = typer.Option(
        False, "--diagnostic-jobs", help="Accept and run the diag.* job types."
    ),
) -> None:
    """Serve the REST API (/api/v1, OpenAPI at /api/v1/docs). SIGTERM/SIGINT stop the server,
    the embedded worker and scheduler gracefully; a second signal exits at once."""
    # Not migrated, or not reachable yet: serve anyway, /api/v1/ready says why (ADR 0011).
    runtime = open_runtime(require_migrated=False)
    if diagnostic_jobs:
        runtime.settings = runtime.settings.model_copy(update={"DOMINUS_DIAGNOSTIC_JOBS": True})
    _refuse_an_open_public_bind(host, api_tokens(runtime.settings))
    # The web app is imported here, not at the top: FastAPI, the dashboard and the backtest's
    # plotting take seconds to import, and every other command would pay for them.
    from dominus.server import create_app  # noqa: PLC0415

    app = create_app(runtime.settings, runtime=runtime, bind_host=host)
    config = uvicorn.Config(app, host=host, port=port, log_config=None)
    worker = None
    if with_worker:
        worker = EmbeddedWorker(
            runtime, app.state.services.queue, concurrency, on_fatal=lambda: _stop(server)
        )
    services = app.state.services
    scheduler = None
    stopping = threading.Event()
    if with_scheduler:
        scheduler = EmbeddedScheduler(
            runtime, services.schedules.scheduler(services.queue), on_fatal=lambda: _stop(server)
        )
    else:
        check_for_a_scheduler_soon(runtime, services.schedules, stopping)
    streams = services.streams

    def stop() -> None:
        stopping.set()
        streams.stop()
        for part in (worker, scheduler):
            if part is not None:
                part.request_shutdown()

    server = _Server(config, on_exit=stop)
    _install_signal_handlers()
    for part in (worker, scheduler):
        if part is not None:
            part.start()
    server.run()
    for part in (worker, scheduler):
        if part is not None:
            part.join()
            if part.failure is not None:
                raise part.failure  # one `error:` line, exit 1
    raise typer.Exit(0)


def _refuse_an_open_public_bind(host: str, tokens: ApiTokens | None) -> None:
    """Off loopback the tokens are the only guard: the API token must be set, and every token
    long enough to resist guessing. (An empty token never gets here: the settings refuse it.)"""
    from dominus.api.security import MIN_PUBLIC_TOKEN_LENGTH  # noqa: PLC0415

    if is_loopback(host):
        return
    if tokens is None:
        raise ConfigurationError(
            f"refusing to serve on {host}, which is not a loopback address, without "
            "DOMINUS_API_TOKEN: set a token, or bind 127.0.0.1"
        )
    for name, token in tokens.named():
        if len(token) < MIN_PUBLIC_TOKEN_LENGTH:
            raise ConfigurationError(
                f"refusing to serve on {host}, which is not a loopback address, with a "
                f"{name} of {len(token)} characters: use at least "
                f"{MIN_PUBLIC_TOKEN_LENGTH} (for example the output of "
                '`python3 -c "import secrets; print(secrets.token_urlsafe(32))"`)'
            )


def _stop(server: uvicorn.Server) -> None:
    server.should_exit = True


class _Server(uvicorn.Server):
    """uvicorn's server, which on the first signal also ends the open event streams (uvicorn
    waits for every open connection) and starts the embedded worker's graceful shutdown, so
    everything stops together."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None] | None) -> None:
        super().__init__(config)
        # Off the signal handler: stopping the worker sets events whose locks the main thread
        # may hold at the moment the signal arrives (see `dominus.cli.signals`).
        self._on_exit = None if on_exit is None else OffHandlerCall(on_exit, "dominus-exit")

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._on_exit is not None:
            self._on_exit.call()
        super().handle_exit(sig, frame)


def _install_signal_handlers() -> None:
    """The handlers under uvicorn's own. uvicorn handles the signals while it serves and, once it
    has stopped, hands each signal it caught on to these: one signal is the graceful stop already
    under way (the embedded worker is draining); a second means "exit at once"."""
    received: list[int] = []

    def handle(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) > 1:
            log.warning("signal again: exiting at once; running jobs will be reclaimed")
            os._exit(128 + signum)

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
