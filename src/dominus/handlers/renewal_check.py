"""RENEWAL_CHECK {}: the portfolio's renewal clock and its alerts (ADR 0022). Scheduled by the
`renewal-check` schedule; any caller may enqueue it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from dominus.handlers.dependencies import HandlerDependencies
from dominus.jobs.context import JobContext
from dominus.jobs.registry import HandlerRegistry
from dominus.renewals.check import RenewalCheck
from dominus.renewals.model import Thresholds
from dominus.renewals.settings import RenewalSettings

RENEWAL_CHECK = "RENEWAL_CHECK"


class RenewalCheckPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")


def thresholds(settings: RenewalSettings) -> Thresholds:
    return Thresholds(
        critical_days=settings.RENEWAL_CRITICAL_DAYS, warning_days=settings.RENEWAL_WARNING_DAYS
    )


def register_renewal_check(registry: HandlerRegistry, dependencies: HandlerDependencies) -> None:
    check = RenewalCheck(
        dependencies.engine,
        dependencies.notifications(),
        thresholds(dependencies.settings),
        dependencies.clock,
    )

    def handle(_payload: RenewalCheckPayload, context: JobContext) -> dict[str, Any]:
        def progress(done: int, total: int, domain: str) -> None:
            context.progress(done=done, total=total, domain=domain)

        return check.run(context.abort, progress).document()

    registry.register(RENEWAL_CHECK, handle, RenewalCheckPayload)
