"""WATCHLIST_POLL {dry_run?}: polls the watchlist entries that are due (ADR 0022). Scheduled by
the `watchlist-poll` schedule; any caller may enqueue it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.payload_options import dry_run_option
from dominus.jobs.registry import HandlerRegistry
from dominus.providers.gate_waits import ProgressWithWaits
from dominus.watchlist.service import poll_watchlist

WATCHLIST_POLL = "WATCHLIST_POLL"


class WatchlistPollPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dry_run: bool = dry_run_option(False, "Look everything up, record nothing, notify nobody.")


def register_watchlist_poll(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    notifier = dependencies.notifications()

    def handle(payload: WatchlistPollPayload, context: JobContext) -> dict[str, Any]:
        report = ProgressWithWaits(context.progress)

        def progress(done: int, total: int, domain: str) -> None:
            report(done=done, total=total, domain=domain)

        result = poll_watchlist(
            dependencies.settings,
            dependencies.engine,
            notifier,
            dependencies.clock,
            dry_run=payload.dry_run,
            stop=context.abort,
            progress=progress,
            gate=report.gate(dependencies.rate_gate()),
        )
        return result.document()

    registry.register(WATCHLIST_POLL, handle, WatchlistPollPayload)
