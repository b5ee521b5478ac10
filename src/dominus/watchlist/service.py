"""What the WATCHLIST_POLL job and `dominus watchlist poll` run: a poll with the providers,
notifier and settings of the process."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import Engine

from dominus.notify.model import Notifier
from dominus.providers.models import StopSignal
from dominus.providers.rate_gate import RateGate
from dominus.providers.setup import open_providers
from dominus.watchlist.poll import PollOptions, PollResult, Progress, WatchlistPoll
from dominus.watchlist.settings import WatchlistSettings
from dominus.watchlist.store import WatchlistStore


def poll_options(settings: WatchlistSettings, *, dry_run: bool) -> PollOptions:
    return PollOptions(
        interval=timedelta(hours=settings.WATCHLIST_POLL_INTERVAL_HOURS),
        rdap_delay_seconds=settings.WATCHLIST_RDAP_DELAY_MS / 1000,
        dry_run=dry_run,
    )


def poll_watchlist(
    settings: WatchlistSettings,
    engine: Engine,
    notifier: Notifier,
    clock: Callable[[], datetime],
    *,
    dry_run: bool,
    stop: StopSignal,
    progress: Progress | None = None,
    gate: RateGate | None = None,
) -> PollResult:
    """Poll the due entries with the providers DOMINUS_PROVIDERS names (real: DNS resolvers and
    RDAP over the network, waiting at `gate`; offline: the sample files)."""
    with open_providers(settings, gate=gate) as providers:
        poll = WatchlistPoll(
            WatchlistStore(engine),
            providers.dns,
            providers.rdap,
            notifier,
            poll_options(settings, dry_run=dry_run),
            clock,
        )
        return poll.run(stop, progress)
