"""Installing the dashboard on the API's app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.resources import files

import anyio
from fastapi import FastAPI
from starlette.staticfiles import StaticFiles
from starlette.types import Lifespan

from dominus.api.services import ApiServices
from dominus.config import ApiTokens
from dominus.web.context import Dashboard
from dominus.web.errors import install_page_errors
from dominus.web.guard import DashboardGuardMiddleware
from dominus.web.live import dashboard_share
from dominus.web.rendering import Pages
from dominus.web.routes import ROUTERS
from dominus.web.session_generation import SessionGeneration
from dominus.web.sessions import SessionKeys
from dominus.web.throughput import ThroughputWindow, sample_forever

__all__ = ["install_dashboard"]


def install_dashboard(app: FastAPI, *, tokens: ApiTokens | None, api_prefix: str) -> None:
    """Add the pages, their static files, their error pages, the throughput sampler and the
    session/CSRF gate to `app` (call before the request guards and limits are added, so they
    run outside the gate)."""
    services: ApiServices = app.state.services
    app.state.dashboard = Dashboard(
        pages=Pages(),
        keys=SessionKeys(tokens.full if tokens else None, tokens.read if tokens else None),
        tokens=tokens,
        throughput=ThroughputWindow(),
        streams=dashboard_share(services.streams.max_streams),
        generations=SessionGeneration(services.runtime.engine),
        throttle=app.state.token_throttle,
    )
    for router in ROUTERS:
        app.include_router(router, include_in_schema=False)
    static = StaticFiles(directory=str(files("dominus.web") / "static"))
    app.mount("/static", static, name="static")
    install_page_errors(app, api_prefix)
    app.add_middleware(
        DashboardGuardMiddleware,
        keys=app.state.dashboard.keys,
        api_prefix=api_prefix,
        current_generation=_generation_reader(services, app.state.dashboard.generations),
    )
    app.router.lifespan_context = _with_sampler(app.router.lifespan_context)


def _generation_reader(services: ApiServices, generations: SessionGeneration) -> Callable[[], int]:
    """The current session generation, once the schema is known to be there (as every route
    checks: a database not migrated yet is a 503 `not_migrated`, not a missing table)."""

    def read() -> int:
        services.schema.check(services.runtime.engine)
        return generations.current()

    return read


def _with_sampler(inner: Lifespan[FastAPI]) -> Lifespan[FastAPI]:
    """The app's lifespan, plus the throughput sampler running beside it."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services: ApiServices = app.state.services
        board: Dashboard = app.state.dashboard
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                sample_forever,
                board.throughput,
                services.store.metric_totals,
                services.now,
                services.streams.read,
                lambda: services.streams.stopping,
            )
            async with inner(app):
                yield
            tasks.cancel_scope.cancel()

    return lifespan
