"""Job handlers: one module per job type. This package builds the registry a process runs with.

The domain handlers (pipeline, portfolio, backtest, maintenance, ...) arrive with their issues;
the diagnostic job types come from the engine and are registered only on request.
"""

from __future__ import annotations

from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.registry import HandlerRegistry


def build_registry(*, diagnostic_jobs: bool) -> HandlerRegistry:
    registry = HandlerRegistry()
    if diagnostic_jobs:
        register_diagnostic_jobs(registry)
    return registry
