"""The portfolio's ledger as every caller uses it (the CLI's `portfolio sold|drop`, the API's
sold and drop actions, the dashboard): the portfolio service whose sales enqueue BACKTEST_BUILD
through the same function as `outcomes add`, so a sale recorded either way is read by a build.

It lives here, not in the portfolio, because the backtest sits above the portfolio."""

from __future__ import annotations

from sqlalchemy import Engine

from dominus.backtest.build_queue import build_enqueuer
from dominus.jobs.client import JobQueue
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.settings import PortfolioSettings


def ledger_service(
    engine: Engine, settings: PortfolioSettings, queue: JobQueue
) -> PortfolioService:
    """A `PortfolioService` whose `sold` (with a price) enqueues BACKTEST_BUILD."""
    return PortfolioService(engine, settings, enqueue_build=build_enqueuer(queue))
