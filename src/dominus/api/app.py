"""The API's application (routes, services, errors, schema) and its guards. `dominus.server`
composes the served app from these and the dashboard; nothing is built at import time."""

from __future__ import annotations

from fastapi import FastAPI

from dominus import __version__
from dominus.api.errors import install_error_handlers
from dominus.api.limits import RequestLimitsMiddleware
from dominus.api.openapi import install_openapi
from dominus.api.request_guards import HostAllowList, RequestGuardMiddleware
from dominus.api.routes import (
    alerts,
    backtest,
    dead_letters,
    health,
    jobs,
    jobs_bulk,
    portfolio,
    queue,
    runs,
    schedules,
    score,
    watchlist,
)
from dominus.api.security import BearerTokenMiddleware
from dominus.api.security_headers import SecurityHeadersMiddleware
from dominus.api.services import ApiServices
from dominus.api.token_throttle import TokenThrottle
from dominus.config import Settings
from dominus.runtime import Runtime

API_PREFIX = "/api/v1"


def create_api(
    settings: Settings, runtime: Runtime, token_throttle: TokenThrottle | None = None
) -> FastAPI:
    """The API's application: its services, routes, error handlers and schema. The served app
    (`dominus.server.create_app`) adds the dashboard and the guards around it."""
    registry = runtime.registry(diagnostic_jobs=settings.DOMINUS_DIAGNOSTIC_JOBS)
    app = FastAPI(
        title="DOMINUS",
        version=__version__,
        description="Jobs, the dead-letter queue, workers, health and metrics of a DOMINUS "
        'installation. Errors are `{"error": {"code", "message"}}`.',
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
    )
    app.state.services = ApiServices(runtime=runtime, queue=runtime.queue(registry))
    app.state.token_throttle = token_throttle or TokenThrottle()
    for module in (
        jobs_bulk,
        jobs,
        runs,
        score,
        portfolio,
        backtest,
        dead_letters,
        queue,
        schedules,
        watchlist,
        alerts,
        health,
    ):
        app.include_router(module.router, prefix=API_PREFIX)
    install_error_handlers(app)
    install_openapi(app, registry)
    return app


def install_guards(
    app: FastAPI, settings: Settings, token: str | None, bind_host: str | None
) -> None:
    """The API's guards around everything the app serves (dashboard pages included), outermost
    last: the body limits, inside the token check (a stranger's body is never read); the token
    check; the host and origin guards, before any body is read (ADR 0008); the security
    headers, outside even the guards, so their refusals carry them too."""
    app.add_middleware(RequestLimitsMiddleware, max_body_bytes=settings.DOMINUS_MAX_BODY_BYTES)
    if token is not None:
        # ADR 0006: the schema and its docs page stay public; so do the probes (ADR 0051: a load
        # balancer or orchestrator has no token, and they say nothing a stranger could use:
        # up, the schedulers' last tick, the database kind and schema revision, never a host,
        # path or user). Everything else needs the token, /metrics included.
        public = frozenset(
            f"{API_PREFIX}{path}" for path in ("/openapi.json", "/docs", "/health", "/ready")
        )
        app.add_middleware(
            BearerTokenMiddleware,
            token=token,
            prefix=API_PREFIX,
            public_paths=public,
            throttle=app.state.token_throttle,
        )
    hosts = HostAllowList.build(bind_host, settings.DOMINUS_ALLOWED_HOSTS)
    app.add_middleware(RequestGuardMiddleware, hosts=hosts, prefix=API_PREFIX)
    app.add_middleware(SecurityHeadersMiddleware, docs_path=f"{API_PREFIX}/docs")
