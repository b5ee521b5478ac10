"""One renewal check: every active portfolio entry's renewal clock, its alert created,
escalated, kept or resolved (`AlertStore.record`), and a notification for each alert that is
new or an escalation, once (`AlertStore.claim_notice`; an alert a crash left unnotified is sent
by the next check). The check's notifications go out as one digest (`renewal.digest`) at its
end, each item with the entry's verdict and renewal cost. Abortable between entries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from dominus.db.errors import database_errors
from dominus.errors import JobAbortedError
from dominus.notify.digest import DigestCollector
from dominus.notify.model import Notification, Notifier, Severity
from dominus.portfolio.model import PortfolioEntry, days_until_renewal
from dominus.portfolio.renewal_prices import default_pricing, entry_renewal_price
from dominus.portfolio.store import read_entries
from dominus.providers.models import StopSignal
from dominus.renewals.model import AlertType, RenewalAlert, Thresholds, alert_type
from dominus.renewals.store import AlertStore
from dominus.scoring.renewal_prices import RenewalPricing

Progress = Callable[[int, int, str], None]  # (done, total, domain)
# One message per check stands for all of its alerts (its items keep the renewal.* events).
DIGEST_EVENT = "renewal.digest"


@dataclass
class CheckResult:
    domains_checked: int = 0
    alerts_created: int = 0
    alerts_escalated: int = 0
    notifications_sent: int = 0

    def document(self) -> dict[str, Any]:
        return {
            "domains_checked": self.domains_checked,
            "alerts_created": self.alerts_created,
            "alerts_escalated": self.alerts_escalated,
            "notifications_sent": self.notifications_sent,
        }


@dataclass(frozen=True)
class RenewalCheck:
    engine: Engine
    notifier: Notifier
    thresholds: Thresholds
    clock: Callable[[], datetime]
    pricing: RenewalPricing = field(default_factory=default_pricing)

    def run(self, stop: StopSignal, progress: Progress | None = None) -> CheckResult:
        alerts = AlertStore(self.engine)
        alerts.resolve_departed(self.clock())
        with database_errors(), self.engine.connect() as connection:
            entries = read_entries(connection, status="active")
        result = CheckResult()
        notices = DigestCollector(self.notifier, DIGEST_EVENT, "renewal alert")
        try:
            for done, entry in enumerate(entries):
                if stop.is_set():
                    raise JobAbortedError(f"job aborted after {done} of {len(entries)} entries")
                if progress is not None:
                    progress(done, len(entries), entry.domain)
                self._check(alerts, entry, result, notices)
        finally:
            # Each alert was claimed as it was found: a check that stops early still sends
            # what it claimed, or those alerts would never be notified.
            notices.send(self.clock())
        if progress is not None:
            progress(len(entries), len(entries), "")
        return result

    def _check(
        self,
        alerts: AlertStore,
        entry: PortfolioEntry,
        result: CheckResult,
        notices: DigestCollector,
    ) -> None:
        now = self.clock()
        days_left = days_until_renewal(entry.renewal_date, now)
        outcome = alerts.record(entry, alert_type(days_left, self.thresholds), days_left, now)
        result.domains_checked += 1
        if outcome.alert_id is not None:
            if outcome.escalated_from is None:
                result.alerts_created += 1
            else:
                result.alerts_escalated += 1
        for alert in alerts.pending_notices(entry.domain):
            if alerts.claim_notice(alert.id, now):
                escalated_from = outcome.escalated_from if alert.id == outcome.alert_id else None
                notices.add(renewal_notification(alert, entry, escalated_from, now, self.pricing))
                result.notifications_sent += 1


def renewal_notification(
    alert: RenewalAlert,
    entry: PortfolioEntry,
    escalated_from: AlertType | None,
    now: datetime,
    pricing: RenewalPricing | None = None,
) -> Notification:
    """The alert's notification; its renewal cost is the price the renewal lookup chose, named
    in `renewal_price_source` so the forecast can be checked against the invoice."""
    renewal = entry_renewal_price(entry, pricing or default_pricing())
    return Notification(
        event=f"renewal.{alert.type.value}",
        severity=Severity.WARNING if alert.severity == "warning" else Severity.CRITICAL,
        subject=f"{_subject(alert, escalated_from)} ({_verdict_and_cost(entry, renewal.amount)})",
        at=now,
        details={
            "alert_id": alert.id,
            "domain": alert.domain,
            "type": alert.type.value,
            "severity": alert.severity,
            "days_left": alert.days_left,
            "renewal_date": alert.renewal_date.isoformat(),
            "renewal_cost": renewal.amount,
            "renewal_price_source": renewal.source,
            "currency": entry.currency,
            "registrar": entry.registrar,
            "escalated_from": None if escalated_from is None else escalated_from.value,
            "verdict": entry.verdict,
            "verdict_reason": entry.verdict_reason,
            "acknowledge": f"dominus alerts ack {alert.id}",
        },
    )


def _verdict_and_cost(entry: PortfolioEntry, renewal_cost: float | None) -> str:
    verdict = entry.verdict or "not scored"
    if renewal_cost is None:
        return f"verdict {verdict}, renewal cost unknown"
    return f"verdict {verdict}, renewal {renewal_cost:,.2f} {entry.currency}"


def _subject(alert: RenewalAlert, escalated_from: AlertType | None) -> str:
    when = alert.renewal_date.isoformat()
    days = alert.days_left
    if days < 0:
        clock = f"renewal is {-days} day{'s' if days != -1 else ''} past due ({when})"
    elif days == 0:
        clock = f"renewal is due today ({when})"
    else:
        clock = f"renews in {days} day{'s' if days != 1 else ''}, on {when}"
    escalation = f"; escalated from {escalated_from.value}" if escalated_from else ""
    return f"{alert.domain} {clock}: {alert.type.value.replace('_', ' ')}{escalation}"
