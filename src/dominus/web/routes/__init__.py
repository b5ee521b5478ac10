"""The dashboard's pages. A new page adds its router here and its entry to
`dominus.web.rendering.NAV_ITEMS` (as the Portfolio page did, ADR 0023)."""

from fastapi import APIRouter

from dominus.web.routes import (
    appraise,
    auth,
    backtest,
    dead_letters,
    history,
    jobs,
    jobs_bulk,
    overview,
    portfolio,
    portfolio_entry,
    portfolio_import,
    queues,
    runs,
    schedules,
    workers,
)

ROUTERS: list[APIRouter] = [
    auth.router,
    overview.router,
    jobs_bulk.router,
    jobs.router,
    dead_letters.router,
    history.router,
    workers.router,
    schedules.router,
    queues.router,
    runs.router,
    appraise.router,
    portfolio.router,
    portfolio_entry.router,
    portfolio_import.router,
    backtest.router,
]
