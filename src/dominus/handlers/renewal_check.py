"""RENEWAL_CHECK {}: the portfolio's renewal clock and its alerts (ADR 0022). Scheduled by the
`renewal-check` schedule; any caller may enqueue it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.registry import HandlerRegistry
from dominus.renewals.service import renewal_check

RENEWAL_CHECK = "RENEWAL_CHECK"


class RenewalCheckPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")


def register_renewal_check(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    check = renewal_check(
        dependencies.settings,
        dependencies.engine,
        dependencies.notifications(),
        dependencies.clock,
    )

    def handle(_payload: RenewalCheckPayload, context: JobContext) -> dict[str, Any]:
        def progress(done: int, total: int, domain: str) -> None:
            context.progress(done=done, total=total, domain=domain)

        return check.run(context.abort, progress).document()

    registry.register(RENEWAL_CHECK, handle, RenewalCheckPayload)
