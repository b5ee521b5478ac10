"""What the RENEWAL_CHECK job runs: the portfolio's renewal clock with the process's settings,
notifier and clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Engine

from dominus.notify.model import Notifier
from dominus.portfolio.renewal_prices import pricing_of
from dominus.renewals.check import RenewalCheck
from dominus.renewals.model import Thresholds
from dominus.renewals.settings import RenewalSettings
from dominus.scoring.settings import ScoringSettings, scoring_config


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
    # The full process settings carry the scoring slice (currency, TLD_PRICES_PATH); a bare
    # RenewalSettings prices renewals with the bundled tables.
    if not isinstance(settings, ScoringSettings):
        return RenewalCheck(engine, notifier, thresholds(settings), clock)
    pricing = pricing_of(scoring_config(settings))
    return RenewalCheck(engine, notifier, thresholds(settings), clock, pricing)
