"""One poll of the watchlist: each due entry is looked up (DNS, then RDAP unless DNS already
shows the name registered), its finding recorded, and a name found available notified once.

The notification is armed by the `notified` flag: a poll that finds an entry available and
flips the flag (a compare-and-set, so racing polls notify once) sends it; the flag is cleared
only when a later poll sees the name registered again. A lookup that fails (timeouts, errors,
answers that disagree) is an error of the poll: it neither notifies nor re-arms.

A dry run looks everything up, records nothing and sends nothing: it reports what a real poll
would have notified. The poll stops between entries when its stop signal is set.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dominus.errors import JobAbortedError
from dominus.notify.model import Notification, Notifier, Severity
from dominus.providers.dns import DnsChecker
from dominus.providers.models import Availability, StopSignal
from dominus.providers.rdap import RdapClient
from dominus.watchlist.model import WatchEntry, WatchStatus
from dominus.watchlist.store import WatchlistStore

EVENT = "watchlist.available"
# A poll treats an entry as due a little early (5 % of the interval), so a poll scheduled
# every interval is not skipped by the few seconds its previous run started later.
DUE_TOLERANCE = 0.05

Progress = Callable[[int, int, str], None]  # (done, total, domain)


@dataclass(frozen=True)
class PollOptions:
    interval: timedelta
    rdap_delay_seconds: float
    dry_run: bool = False


@dataclass(frozen=True)
class Finding:
    status: WatchStatus
    detail: str


@dataclass
class PollResult:
    checked: int = 0
    available: int = 0
    notified: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    dry_run: bool = False

    def document(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "available": self.available,
            "notified": self.notified,
            "errors": self.errors,
            "dry_run": self.dry_run,
        }


class RdapPacer:
    """Keeps RDAP lookups at least `delay_seconds` apart, waiting on the stop signal."""

    def __init__(self, delay_seconds: float, stop: StopSignal) -> None:
        self._delay = delay_seconds
        self._stop = stop
        self._last: float | None = None

    def wait_turn(self) -> None:
        if self._last is not None:
            remaining = self._delay - (time.monotonic() - self._last)
            if remaining > 0 and self._stop.wait(remaining):
                raise JobAbortedError("job aborted while waiting between RDAP lookups")
        self._last = time.monotonic()


def look_up(
    domain: str, dns: DnsChecker, rdap: RdapClient, pacer: RdapPacer, stop: StopSignal
) -> Finding:
    verdict = dns.check(domain, stop)
    if verdict.availability is Availability.REGISTERED:
        return Finding("registered", f"DNS: {verdict.detail}")
    pacer.wait_turn()
    record = rdap.lookup(domain, stop)
    detail = f"DNS: {verdict.detail}; RDAP: {record.detail}"
    if record.availability is Availability.AVAILABLE:
        return Finding("available", detail)
    if record.availability is Availability.REGISTERED:
        return Finding("registered", detail)
    return Finding("unknown", detail)


@dataclass(frozen=True)
class WatchlistPoll:
    store: WatchlistStore
    dns: DnsChecker
    rdap: RdapClient
    notifier: Notifier
    options: PollOptions
    clock: Callable[[], datetime]

    def run(self, stop: StopSignal, progress: Progress | None = None) -> PollResult:
        started = self.clock()
        due = self.store.due(started, self.options.interval * (1 - DUE_TOLERANCE))
        result = PollResult(dry_run=self.options.dry_run)
        pacer = RdapPacer(self.options.rdap_delay_seconds, stop)
        for done, entry in enumerate(due):
            if stop.is_set():
                raise JobAbortedError(f"job aborted after {done} of {len(due)} watched domains")
            if progress is not None:
                progress(done, len(due), entry.domain)
            self._poll_one(entry, pacer, stop, result)
        if progress is not None:
            progress(len(due), len(due), "")
        return result

    def _poll_one(
        self, entry: WatchEntry, pacer: RdapPacer, stop: StopSignal, result: PollResult
    ) -> None:
        try:
            finding = look_up(entry.domain, self.dns, self.rdap, pacer, stop)
        except JobAbortedError:
            raise
        except Exception as error:  # noqa: BLE001 - one broken lookup is an error, not a failed poll
            finding = Finding("unknown", f"lookup failed: {type(error).__name__}: {error}")
        if stop.is_set() and finding.status == "unknown":
            raise JobAbortedError("job aborted during a lookup")  # "stopped" is no finding
        result.checked += 1
        if finding.status == "unknown":
            result.errors.append({"domain": entry.domain, "error": finding.detail})
        elif finding.status == "available":
            result.available += 1
        if self.options.dry_run:
            if finding.status == "available" and not entry.notified:
                result.notified += 1  # what a real poll would send
            return
        now = self.clock()
        self.store.record_check(entry, finding.status, finding.detail, now)
        if finding.status == "available" and self.store.claim_notification(entry.id, now):
            self.notifier.send(available_notification(entry, finding, now))
            result.notified += 1


def available_notification(entry: WatchEntry, finding: Finding, now: datetime) -> Notification:
    return Notification(
        event=EVENT,
        severity=Severity.WARNING,
        subject=f"{entry.domain} is available to register",
        at=now,
        details={
            "domain": entry.domain,
            "notes": entry.notes,
            "previous_status": entry.last_status,
            "detail": finding.detail,
        },
    )
