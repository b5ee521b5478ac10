"""Where a registered name stands on its way to being deleted, and when it should drop.

The phase comes from the registry's RDAP status values (RFC 9083 spelling, see
`dominus.providers.rdap_statuses`). A deleted name carries the EPP status pendingDelete for
the whole of its redemption grace period *and* the five days after it (RFC 3915 section 2), so
"redemption period" wins over "pending delete" when both are listed; "pending delete" alone is
the last stretch.

The day it drops is counted from the grace periods of its registry, `GRACE_PERIODS`, a table
per TLD with its source. A TLD not in the table gets no estimate, and says so: registries
outside the ICANN legacy agreements below choose their own periods (many ccTLDs have no
redemption at all), and a guessed day is worse than none. See ADR 0047.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum


class DropPhase(StrEnum):
    """What the registry's statuses say about deletion. NONE: registered, none of these."""

    NONE = "none"
    AUTO_RENEW = "auto_renew_period"
    REDEMPTION = "redemption_period"
    PENDING_RESTORE = "pending_restore"
    PENDING_DELETE = "pending_delete"

    @property
    def label(self) -> str:
        """The EPP name people know the phase by ("pendingDelete")."""
        return _LABELS[self]


_LABELS = {
    DropPhase.NONE: "no drop status",
    DropPhase.AUTO_RENEW: "autoRenewPeriod",
    DropPhase.REDEMPTION: "redemptionPeriod",
    DropPhase.PENDING_RESTORE: "pendingRestore",
    DropPhase.PENDING_DELETE: "pendingDelete",
}


def drop_phase(statuses: tuple[str, ...]) -> DropPhase:
    """The phase a status list shows, the most telling status first."""
    present = set(statuses)
    if "pending restore" in present:
        return DropPhase.PENDING_RESTORE
    if "redemption period" in present:
        return DropPhase.REDEMPTION
    if "pending delete" in present:
        return DropPhase.PENDING_DELETE
    if "auto renew period" in present:
        return DropPhase.AUTO_RENEW
    return DropPhase.NONE


@dataclass(frozen=True)
class GracePeriods:
    """A registry's periods in calendar days, and where they are written down."""

    auto_renew_days: int  # the most a registrar may wait after expiry before deleting
    redemption_days: int
    pending_delete_days: int
    source: str


# The .com/.net registry agreements (Verisign, Appendix 7 "Functional and Performance
# Specifications", grace period policy): auto-renew grace period 45 days, redemption grace
# period 30 calendar days, pending delete 5 calendar days. The .org (PIR), .info (Identity
# Digital, formerly Afilias) and .biz registry agreements' appendices on grace periods set the
# same three periods. ICANN's Expired Registration Recovery Policy (ERRP) keeps the 30-day
# redemption grace period mandatory for these gTLDs.
_VERISIGN = GracePeriods(45, 30, 5, "Verisign .com/.net registry agreement, grace period policy")
GRACE_PERIODS: dict[str, GracePeriods] = {
    "com": _VERISIGN,
    "net": _VERISIGN,
    "org": GracePeriods(45, 30, 5, "PIR .org registry agreement, grace period policy"),
    "info": GracePeriods(45, 30, 5, ".info registry agreement, grace period policy"),
    "biz": GracePeriods(45, 30, 5, ".biz registry agreement, grace period policy"),
}


@dataclass(frozen=True)
class DropEstimate:
    """The expected drop day (None: no estimate) and, in words, how it was reached or why
    there is none. `latest` marks a bound rather than a day: in the auto-renew grace period
    the registrar may delete the name any day, so it can drop sooner."""

    drops_on: date | None
    basis: str
    latest: bool = False


@dataclass(frozen=True)
class PhaseFacts:
    """What is known about the name's present phase."""

    domain: str
    phase: DropPhase
    seen_since: date  # the first poll that saw this phase
    last_changed: date | None  # the registry's "last changed" event
    expires: date | None  # the registry's expiration event


def estimate_drop(facts: PhaseFacts, today: date) -> DropEstimate:
    if facts.phase is DropPhase.NONE:
        return DropEstimate(None, "no drop status")
    if facts.phase is DropPhase.PENDING_RESTORE:
        return DropEstimate(None, "a restore was requested: it drops only if the restore fails")
    tld = facts.domain.rsplit(".", 1)[-1]
    periods = GRACE_PERIODS.get(tld)
    if periods is None:
        return DropEstimate(None, f"no estimate: .{tld} is not in the grace-period table")
    tail = periods.pending_delete_days
    if facts.phase is DropPhase.PENDING_DELETE:
        start, how = _phase_start(facts, tail, today)
        return DropEstimate(start + timedelta(days=tail), f"{how} + {tail} days pending delete")
    tail += periods.redemption_days
    if facts.phase is DropPhase.REDEMPTION:
        start, how = _phase_start(facts, periods.redemption_days, today)
        return DropEstimate(
            start + timedelta(days=tail),
            f"{how} + {periods.redemption_days} days redemption + "
            f"{periods.pending_delete_days} days pending delete",
        )
    grace = periods.auto_renew_days
    if facts.expires is not None and facts.expires <= today <= facts.expires + timedelta(grace):
        start, how = facts.expires, f"expired {facts.expires.isoformat()}"
    else:  # the registry already moved the expiration on by a year, as Verisign's does
        start, how = _phase_start(facts, grace, today)
    return DropEstimate(
        start + timedelta(days=grace + tail),
        f"at the latest: {how} + up to {grace} days auto-renew grace + "
        f"{periods.redemption_days} days redemption + {periods.pending_delete_days} days "
        "pending delete; the registrar may delete it sooner",
        latest=True,
    )


def _phase_start(facts: PhaseFacts, length_days: int, today: date) -> tuple[date, str]:
    """When the phase began: the registry's last-changed date when it fits (no later than the
    first poll that saw the phase, and not so early that the phase would already be over),
    else that first poll's day, which is never earlier than the true start."""
    changed = facts.last_changed
    fits = changed is not None and changed <= facts.seen_since
    if changed is not None and fits and changed + timedelta(days=length_days) >= today:
        return changed, f"{facts.phase.label} since {changed.isoformat()} (last changed)"
    since = facts.seen_since
    return since, f"{facts.phase.label} seen since {since.isoformat()}"


@dataclass(frozen=True)
class DropRecord:
    """What one RDAP answer says about a name's deletion, as stored on its entry."""

    statuses: tuple[str, ...]
    expires_on: date | None
    last_changed_on: date | None
    phase: DropPhase
    phase_since: datetime
    estimate: DropEstimate


def drop_notice_due(notified_phase: str | None, phase: DropPhase) -> bool:
    """Whether reaching `phase` is news: a phase other than the last one notified. The first
    answer ever seen is news only if it is a drop phase ("no drop status" is where names
    start, and is recorded as notified without a message)."""
    if notified_phase is None:
        return phase is not DropPhase.NONE
    return notified_phase != phase.value
