"""The API's application (routes, services, errors, schema) and its guards. `dominus.server`
composes the served app from these and the dashboard; nothing is built at import time."""

from __future__ import annotations

from fastapi import Depends, FastAPI

from dominus import __version__
from dominus.api.declared_inputs import refuse_undeclared_inputs
from dominus.api.docs_page import install_docs
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
    keys,
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
from dominus.config import ApiTokens, Settings, api_tokens
from dominus.runtime import Runtime

API_PREFIX = "/api/v1"
DOCS_URL = f"{API_PREFIX}/docs"
DOCS_ASSETS_URL = f"{DOCS_URL}/assets"
API_DESCRIPTION = """\
DOMINUS's HTTP API: a durable job queue, and the domain-investing features built on it.

- **jobs**: enqueue a job (`POST /jobs`, one body schema per job type this installation \
accepts), list and filter jobs, read one with its events, follow it live (Server-Sent Events), \
cancel, retry.
- **dead-letter queue** (`/dlq`): jobs that used up their attempts; requeue one, purge old ones.
- **queue**: counts, latency (how long the oldest due job has waited) and live workers; the \
named queues, paused and resumed for every worker at once.
- **keys**: the rate limits every process shares and the keys paused until a server's \
Retry-After; end a pause early.
- **schedules**: the cron schedules, their next and last fires; enable and disable them.
- **runs**: start a pipeline run on keywords, brandables and closeout listings, follow it stage \
by stage, read its candidates ranked (JSON or CSV).
- **score**: appraise single names as a run would, with every figure behind the verdict.
- **portfolio**: the names held, their renewals and keep/drop/reprice verdicts; add, edit, \
sell and drop names.
- **backtest**: the report on recorded outcomes and the weight sets in use.
- **watchlist** and **alerts**: names watched until they can be registered; renewal alerts \
and their acknowledgement.
- **operations**: `/health` and `/ready` (public probes) and `/metrics` (Prometheus).

**Authentication.** With `DOMINUS_API_TOKEN` set, every path but `/health`, `/ready`, this \
document and its docs page needs `Authorization: Bearer <token>` (the **Authorize** button). \
A read-only token (`DOMINUS_API_READ_TOKEN`) may read (GET) every path and change nothing; a \
metrics token (`DOMINUS_API_METRICS_TOKEN`) may read `/metrics` only; asking for more is a 403. \
Without a token the API answers on loopback only.

**Errors** are `{"error": {"code", "message"}}`, with the HTTP status that fits: 401 and 403 \
for the token, 404 for what does not exist, 409 for a conflict, 422 for bad input (nothing is \
written), 429 with Retry-After, 503 while the database is unavailable or not migrated.
"""


def create_api(
    settings: Settings, runtime: Runtime, token_throttle: TokenThrottle | None = None
) -> FastAPI:
    """The API's application: its services, routes, error handlers and schema. The served app
    (`dominus.server.create_app`) adds the dashboard and the guards around it."""
    registry = runtime.registry(diagnostic_jobs=settings.DOMINUS_DIAGNOSTIC_JOBS)
    app = FastAPI(
        title="DOMINUS",
        version=__version__,
        description=API_DESCRIPTION,
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # served from the package's own copy of Swagger UI (docs_page.py)
        redoc_url=None,
    )
    install_docs(app, docs_url=DOCS_URL, openapi_url=f"{API_PREFIX}/openapi.json")
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
        keys,
        schedules,
        watchlist,
        alerts,
        health,
    ):
        app.include_router(
            module.router, prefix=API_PREFIX, dependencies=[Depends(refuse_undeclared_inputs)]
        )
    install_error_handlers(app)
    install_openapi(app, registry, token_required=api_tokens(settings) is not None)
    return app


def install_guards(
    app: FastAPI, settings: Settings, tokens: ApiTokens | None, bind_host: str | None
) -> None:
    """The API's guards around everything the app serves (dashboard pages included), outermost
    last: the body limits, inside the token check (a stranger's body is never read); the token
    check; the host and origin guards, before any body is read (ADR 0008); the security
    headers, outside even the guards, so their refusals carry them too."""
    app.add_middleware(RequestLimitsMiddleware, max_body_bytes=settings.DOMINUS_MAX_BODY_BYTES)
    if tokens is not None:
        # ADR 0006: the schema and its docs page stay public; so do the probes (ADR 0051: a load
        # balancer or orchestrator has no token, and they say nothing a stranger could use:
        # up, the schedulers' last tick, the database kind and schema revision, never a host,
        # path or user). Everything else needs a token, /metrics included (which the metrics
        # token reads: ADR 0055).
        public = frozenset(
            f"{API_PREFIX}{path}" for path in ("/openapi.json", "/docs", "/health", "/ready")
        )
        # The docs page's script, style and icon: public like the page (ADR 0055).
        app.add_middleware(
            BearerTokenMiddleware,
            tokens=tokens,
            prefix=API_PREFIX,
            public_paths=public,
            public_prefixes=(f"{DOCS_ASSETS_URL}/",),
            throttle=app.state.token_throttle,
        )
    hosts = HostAllowList.build(bind_host, settings.DOMINUS_ALLOWED_HOSTS)
    app.add_middleware(RequestGuardMiddleware, hosts=hosts, prefix=API_PREFIX)
    app.add_middleware(SecurityHeadersMiddleware, docs_path=DOCS_URL)
