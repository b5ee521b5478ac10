"""One poll of the watchlist: each due entry is looked up (DNS, then RDAP), its finding
recorded, a name found available notified once, and each change of a registered name's drop
phase (the registry's statuses: autoRenewPeriod, redemptionPeriod, pendingDelete, ...) notified
once with its expected drop day (`drops.py`).

DNS decides availability as before: a registered answer settles it. RDAP is asked even then,
for the registry's statuses and dates; when that lookup fails the name is still registered and
its last drop facts stand (ADR 0047).

The availability notification is armed by the `notified` flag: a poll that finds an entry
available and flips the flag (a compare-and-set, so racing polls notify once) sends it; the
flag is cleared only when a later poll sees the name registered again. A lookup that fails
(timeouts, errors, answers that disagree) is an error of the poll: it neither notifies nor
re-arms. A drop phase is notified once per change the same way (`drop_notified_phase`).
A poll's notices go out together, as one digest (`watchlist.digest`) at its end.

A dry run looks everything up, records nothing and sends nothing: it reports what a real poll
would have notified. The poll stops between entries when its stop signal is set.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from dominus.errors import JobAbortedError
from dominus.notify.digest import DigestCollector
from dominus.notify.model import Notification, Notifier, Severity
from dominus.providers.dns import DnsChecker
from dominus.providers.models import Availability, RdapRecord, StopSignal
from dominus.providers.rdap import RdapClient
from dominus.watchlist.drops import (
    DropPhase,
    DropRecord,
    PhaseFacts,
    drop_notice_due,
    drop_phase,
    estimate_drop,
)
from dominus.watchlist.model import WatchEntry, WatchStatus
from dominus.watchlist.store import WatchlistStore

EVENT = "watchlist.available"
DROP_EVENT = "watchlist.drop_status"
# One message per poll stands for all of its notices (its items keep the events above).
DIGEST_EVENT = "watchlist.digest"
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
    # The registry's answer when it said registered (its statuses and dates), else None.
    record: RdapRecord | None = None


@dataclass
class PollResult:
    checked: int = 0
    available: int = 0
    notified: int = 0
    drop_changes: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    dry_run: bool = False

    def document(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "available": self.available,
            "notified": self.notified,
            "drop_changes": self.drop_changes,
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
    pacer.wait_turn()
    record = rdap.lookup(domain, stop)
    detail = f"DNS: {verdict.detail}; RDAP: {record.detail}"
    registry_says_registered = record.availability is Availability.REGISTERED
    if verdict.availability is Availability.REGISTERED:
        # DNS settles it; RDAP only adds the statuses, when it could answer.
        return Finding("registered", detail, record if registry_says_registered else None)
    if record.availability is Availability.AVAILABLE:
        return Finding("available", detail)
    if registry_says_registered:
        return Finding("registered", detail, record)
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
        notices = DigestCollector(self.notifier, DIGEST_EVENT, "watchlist change")
        try:
            for done, entry in enumerate(due):
                if stop.is_set():
                    raise JobAbortedError(f"job aborted after {done} of {len(due)} watched domains")
                if progress is not None:
                    progress(done, len(due), entry.domain)
                self._poll_one(entry, pacer, stop, result, notices)
        finally:
            # The notices were claimed as they were found: a poll that stops early still
            # sends them, or they would be lost.
            notices.send(self.clock())
        if progress is not None:
            progress(len(due), len(due), "")
        return result

    def _poll_one(
        self,
        entry: WatchEntry,
        pacer: RdapPacer,
        stop: StopSignal,
        result: PollResult,
        notices: DigestCollector,
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
        now = self.clock()
        drop = drop_record(entry, finding.record, now)
        if self.options.dry_run:  # count what a real poll would send
            if finding.status == "available" and not entry.notified:
                result.notified += 1
            if drop is not None and drop_notice_due(entry.drop_notified_phase, drop.phase):
                result.notified += 1
                result.drop_changes += 1
            return
        self.store.record_check(entry, finding.status, finding.detail, now, drop)
        if finding.status == "available" and self.store.claim_notification(entry.id, now):
            notices.add(available_notification(entry, finding, now))
            result.notified += 1
        if (
            drop is not None
            and drop_notice_due(entry.drop_notified_phase, drop.phase)
            and self.store.claim_drop_notice(entry.id, drop.phase, now)
        ):
            notices.add(drop_notification(entry, drop, now))
            result.notified += 1
            result.drop_changes += 1


def drop_record(entry: WatchEntry, record: RdapRecord | None, now: datetime) -> DropRecord | None:
    """The drop facts of a registered answer that listed statuses (None otherwise: a WHOIS
    answer, a server that sent no status list, a failed lookup). The phase's start is kept
    from the entry while the phase is unchanged."""
    if record is None or record.statuses is None:
        return None
    phase = drop_phase(record.statuses)
    since = now
    if entry.drop_phase == phase.value and entry.drop_phase_since is not None:
        since = entry.drop_phase_since
    facts = PhaseFacts(
        domain=entry.domain,
        phase=phase,
        seen_since=_utc_day(since),
        last_changed=record.last_changed_at,
        expires=record.expires_at,
    )
    estimate = estimate_drop(facts, _utc_day(now))
    return DropRecord(
        record.statuses, record.expires_at, record.last_changed_at, phase, since, estimate
    )


def _utc_day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


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
            "in_portfolio": entry.in_portfolio,
        },
    )


def drop_notification(entry: WatchEntry, drop: DropRecord, now: datetime) -> Notification:
    """ "example.com enters pendingDelete: drops about 2026-12-19"."""
    previous = DropPhase(entry.drop_notified_phase) if entry.drop_notified_phase else None
    return Notification(
        event=DROP_EVENT,
        severity=Severity.INFO if drop.estimate.drops_on is None else Severity.WARNING,
        subject=drop_subject(entry.domain, previous, drop),
        at=now,
        details={
            "domain": entry.domain,
            "notes": entry.notes,
            "phase": drop.phase.value,
            "previous_phase": None if previous is None else previous.value,
            "statuses": list(drop.statuses),
            "expected_drop_on": _iso(drop.estimate.drops_on),
            "drop_estimate": drop.estimate.basis,
            "expires_on": _iso(drop.expires_on),
            "last_changed_on": _iso(drop.last_changed_on),
            "in_portfolio": entry.in_portfolio,
        },
    )


def drop_subject(domain: str, previous: DropPhase | None, drop: DropRecord) -> str:
    if drop.phase is DropPhase.NONE:
        left = "its drop status" if previous is None else previous.label
        return f"{domain} left {left}: renewed or restored, no drop expected"
    verb = "is in" if previous is None else "enters"
    estimate = drop.estimate
    if estimate.drops_on is None:
        return f"{domain} {verb} {drop.phase.label}: {estimate.basis}"
    when = "at the latest about" if estimate.latest else "about"
    return f"{domain} {verb} {drop.phase.label}: drops {when} {estimate.drops_on.isoformat()}"


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()
