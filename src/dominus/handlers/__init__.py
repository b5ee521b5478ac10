"""Job handlers: one module per job type. This package builds the registry a process runs with.

Domain handlers need the process's settings, engine and clock (`HandlerDependencies`); without
them only the engine's own (diagnostic) types can be registered. The diagnostic job types are
registered only on request.
"""

from __future__ import annotations

from dominus.handlers.backtest_build import register_backtest_build
from dominus.handlers.backup import register_backup
from dominus.handlers.dependencies import HandlerDependencies
from dominus.handlers.pipeline_run import register_pipeline_run
from dominus.handlers.portfolio_rescore import register_portfolio_rescore
from dominus.handlers.prune import register_prune
from dominus.handlers.renewal_check import register_renewal_check
from dominus.handlers.watchlist_poll import register_watchlist_poll
from dominus.handlers.weight_tune import register_weight_tune
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.registry import HandlerRegistry

__all__ = ["HandlerDependencies", "build_registry"]


def build_registry(
    *, diagnostic_jobs: bool, dependencies: HandlerDependencies | None = None
) -> HandlerRegistry:
    registry = HandlerRegistry()
    if dependencies is not None:
        register_pipeline_run(registry, dependencies)
        register_backup(registry, dependencies)
        register_prune(registry, dependencies)
        register_portfolio_rescore(registry, dependencies)
        register_backtest_build(registry, dependencies)
        register_weight_tune(registry, dependencies)
        register_watchlist_poll(registry, dependencies)
        register_renewal_check(registry, dependencies)
    if diagnostic_jobs:
        register_diagnostic_jobs(registry)
    return registry
