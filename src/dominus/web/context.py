"""What the dashboard's routes share, kept on the app (one per process)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from dominus.api.stream_limits import StreamLimits
from dominus.api.token_throttle import TokenThrottle
from dominus.config import ApiTokens
from dominus.web.rendering import Pages
from dominus.web.session_generation import SessionGeneration
from dominus.web.sessions import SessionKeys
from dominus.web.throughput import ThroughputWindow


@dataclass(frozen=True)
class Dashboard:
    pages: Pages
    keys: SessionKeys
    tokens: ApiTokens | None  # None: no login (ADR 0023)
    throughput: ThroughputWindow
    streams: StreamLimits  # the dashboard's share of the process's stream slots
    generations: SessionGeneration  # which session cookies are still valid (logout moves it)
    throttle: TokenThrottle  # wrong tokens per client address, shared with the API's check


def dashboard(request: Request) -> Dashboard:
    found: Dashboard = request.app.state.dashboard
    return found


Web = Annotated[Dashboard, Depends(dashboard)]
