"""PORTFOLIO_RESCORE {domain?}: rescore one portfolio entry or every active one, then refresh the
verdicts (dominus.portfolio.rescore). Enqueued by POST /api/v1/portfolio/rescore, `dominus
portfolio rescore`, and the portfolio-rescore schedule (payload `{}`: every entry)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dominus.errors import PermanentJobError
from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.registry import HandlerRegistry
from dominus.portfolio.model import PortfolioError
from dominus.portfolio.rescore import rescore
from dominus.providers.gate_waits import ProgressWithWaits

PORTFOLIO_RESCORE = "PORTFOLIO_RESCORE"
RESCORE_CONCURRENCY_KEY = "portfolio-rescore:all"


class PortfolioRescorePayload(BaseModel):
    """Rescore `domain` (an entry of the portfolio), or every active entry when it is absent."""

    model_config = ConfigDict(extra="forbid")

    domain: str | None = Field(default=None, min_length=1, max_length=253)


def register_portfolio_rescore(
    registry: HandlerRegistry, dependencies: HandlerDependencies
) -> None:
    def handle(payload: PortfolioRescorePayload, context: JobContext) -> dict[str, Any]:
        return run_rescore(payload.domain, context, dependencies)

    registry.register(
        PORTFOLIO_RESCORE,
        handle,
        PortfolioRescorePayload,
        max_attempts=3,
        # One rescore of the portfolio at a time: the payload names an entry, not a portfolio
        # (there is one), and a rescore of one entry refreshes the same verdicts as a rescore of
        # every entry, so they share the key (ADR 0052).
        concurrency_key=lambda _payload: RESCORE_CONCURRENCY_KEY,
        concurrency_limit=1,
    )


def run_rescore(
    domain: str | None, context: JobContext, dependencies: HandlerDependencies
) -> dict[str, Any]:
    report = ProgressWithWaits(context.progress)

    def progress(name: str, done: int, total: int) -> None:
        report(domain=name, done=done, total=total)

    try:
        result = rescore(
            dependencies.settings,
            dependencies.engine,
            dependencies.clock,
            domain,
            stop=context.abort,
            on_progress=progress,
            gate=report.gate(dependencies.rate_gate()),
        )
    except PortfolioError as error:
        raise PermanentJobError(error.message) from None
    context.abort.raise_if_set()
    return result.to_dict()
