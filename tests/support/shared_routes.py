"""One analysis of each API route for every app a test process builds.

FastAPI (0.165) works out an included route's request handler (its dependencies, the pydantic
adapters of its parameters, body and response) lazily, on an app's first request, and once per
app. The suite builds a new app for about a thousand tests, from the same module-level routers
every time, so each of those tests paid for that again: about 0.07 s of CPU a test, a third of
a typical API test's CPU. `share_route_analysis()` keeps the result per route and inclusion
(prefix, tags, dependencies, limits, ...) and hands it to every later app of the process.

The one thing such a result holds of its app is the app's `dependency_overrides`, which the
handler consults; no test sets any, and an app that has some when its routes are first used is
analysed for itself (`app.dependency_overrides` set only after its first request would go
unseen: do not do that). Production code builds one app per process and is not touched.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from fastapi import routing

_lock = threading.Lock()
# id(route) -> [(inclusion context without its app, the route, its analysis), ...]; the route is
# kept so that its id is never reused.
_analysed: dict[int, list[tuple[Any, Any, Any]]] = {}


def share_route_analysis() -> None:
    """Install the shared analysis in this process (idempotent). Does nothing if FastAPI no
    longer has the internals it relies on: the suite is then slower, never wrong."""
    context_class: Any = getattr(routing, "_EffectiveRouteContext", None)
    analyse = getattr(context_class, "from_api_route", None)
    if analyse is None or getattr(analyse, "shared", False):
        return
    original = analyse.__func__

    def shared_analysis(cls: Any, *, original_route: Any, include_context: Any) -> Any:
        provider = include_context.dependency_overrides_provider
        if getattr(provider, "dependency_overrides", None):
            return original(cls, original_route=original_route, include_context=include_context)
        inclusion = dataclasses.replace(include_context, dependency_overrides_provider=None)
        with _lock:
            for known_inclusion, _route, result in _analysed.get(id(original_route), []):
                if known_inclusion == inclusion:
                    return result
        result = original(cls, original_route=original_route, include_context=include_context)
        with _lock:
            _analysed.setdefault(id(original_route), []).append((inclusion, original_route, result))
        return result

    shared_analysis.shared = True  # type: ignore[attr-defined]
    context_class.from_api_route = classmethod(shared_analysis)
