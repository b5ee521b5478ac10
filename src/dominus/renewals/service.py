"""What the RENEWAL_CHECK job runs: the portfolio's renewal clock with the process's settings,
notifier and clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Engine

from dominus.notify.model import Notifier
from dominus.renewals.check import RenewalCheck
from dominus.renewals.model import Thresholds
from dominus.renewals.settings import RenewalSettings


def thresholds(settings: RenewalSettings) -> Thresholds:
    return Thresholds(
        critical_days=settings.RENEWAL_CRITICAL_DAYS, warning_days=settings.RENEWAL_WARNING_DAYS
    )


def renewal_check(
    settings: RenewalSettings,
    engine: Engine,
    notifier: Notifier,
    clock: Callable[[], datetime],
) -> RenewalCheck:
    return RenewalCheck(engine, notifier, thresholds(settings), clock)
