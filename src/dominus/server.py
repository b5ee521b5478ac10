"""The served application: the HTTP API and the dashboard behind one set of guards, built from
the settings when it is created, never at import time. `dominus serve` runs it."""

from __future__ import annotations

from fastapi import FastAPI

from dominus.api.app import API_PREFIX, create_api, install_guards
from dominus.api.token_throttle import TokenThrottle
from dominus.config import Settings, api_tokens, load_settings
from dominus.runtime import Runtime, build_runtime
from dominus.web.install import install_dashboard


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
    tokens = api_tokens(settings)  # before anything is opened: an empty token is refused
    runtime = runtime or build_runtime(settings, require_migrated=False)
    app = create_api(settings, runtime, token_throttle)
    # The pages (ADR 0023): inside the guards, so those apply to them too.
    install_dashboard(app, tokens=tokens, api_prefix=API_PREFIX)
    install_guards(app, settings, tokens, bind_host)
    return app
