"""The FastAPI application factory. Everything (engine, store, queue) is built here, from the
settings, when the app is created, never at import time."""

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
from dominus.config import Settings, api_token, load_settings
from dominus.runtime import Runtime, build_runtime

API_PREFIX = "/api/v1"


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    bind_host: str | None = None,
    token_throttle: TokenThrottle | None = None,
) -> FastAPI:
    """Build the app. The database is not required to be reachable or migrated at this point:
        `/api/v1/ready` reports that, and other endpoints answer 503 until it is. `bind_host` is the
        address the server listens on (`serve --host`); without it the app answers to loopback names
        and DOMINUS_ALLOWED_HOSTS only. `token_throttle` counts wrong tokens per client address, for
    the API and the dashboard's login form alike (a new one by default; tests give theirs a
    clock)."""
    settings = settings or (runtime.settings if runtime else load_settings())
    token = api_token(settings)  # before anything is opened: an empty token is refused
    runtime = runtime or build_runtime(settings, require_migrated=False)
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
    # The pages (ADR 0023): inside the limits and guards added below, so those apply to them.
    # Imported here: the dashboard builds on this package's services and routes, so a module
    # level import would make `import dominus.web...` first a circular one.
    from dominus.web.install import install_dashboard  # noqa: PLC0415

    install_dashboard(app, token=token, api_prefix=API_PREFIX)
    # Inside the token check: a stranger's body is never read.
    app.add_middleware(RequestLimitsMiddleware, max_body_bytes=settings.DOMINUS_MAX_BODY_BYTES)
    if token is not None:
        # ADR 0006: the schema and its docs page stay public; everything else needs the token.
        public = frozenset({f"{API_PREFIX}/openapi.json", f"{API_PREFIX}/docs"})
        app.add_middleware(
            BearerTokenMiddleware,
            token=token,
            prefix=API_PREFIX,
            public_paths=public,
            throttle=app.state.token_throttle,
        )
    # Before the token and before any body is read (ADR 0008).
    hosts = HostAllowList.build(bind_host, settings.DOMINUS_ALLOWED_HOSTS)
    app.add_middleware(RequestGuardMiddleware, hosts=hosts, prefix=API_PREFIX)
    # Outside even the guards, so their refusals carry the headers too.
    app.add_middleware(SecurityHeadersMiddleware, docs_path=f"{API_PREFIX}/docs")
    return app
