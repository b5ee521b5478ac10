"""Drop status without a network: RDAP status values in both spellings, the phase they show, and
the drop day each TLD's grace periods give (or no estimate, said so)."""

from __future__ import annotations

from datetime import date

import pytest

from dominus.providers.rdap_statuses import normalised_status, statuses_of
from dominus.schema.tables import DROP_PHASES
from dominus.watchlist.drops import (
    GRACE_PERIODS,
    DropPhase,
    PhaseFacts,
    drop_notice_due,
    drop_phase,
    estimate_drop,
)

TODAY = date(2026, 12, 16)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("pending delete", "pending delete"),
        ("pendingDelete", "pending delete"),
        ("redemptionPeriod", "redemption period"),
        ("Redemption Period", "redemption period"),
        ("autoRenewPeriod", "auto renew period"),
        ("auto renew period", "auto renew period"),
        ("PENDING_DELETE", "pending delete"),
        ("clientTransferProhibited", "client transfer prohibited"),
        ("pending-restore", "pending restore"),
        ("ok", "ok"),
        ("<script>", None),
        ("", None),
        ("x" * 65, None),
    ],
)
def test_both_spellings_of_a_status_read_alike(raw: str, expected: str | None) -> None:
    assert normalised_status(raw) == expected


def test_a_status_list_is_cleaned_and_an_absent_one_is_not_empty() -> None:
    assert statuses_of(["pendingDelete", "pending delete", 7, None, "redemption period"]) == (
        "pending delete",
        "redemption period",
    )
    assert statuses_of([]) == ()
    assert statuses_of(None) is None
    assert statuses_of("pending delete") is None  # not a list: the registry said nothing usable
    assert len(statuses_of([f"status{'a' * n}" for n in range(100)]) or ()) == 32


@pytest.mark.parametrize(
    ("statuses", "phase"),
    [
        (("client transfer prohibited",), DropPhase.NONE),
        ((), DropPhase.NONE),
        (("auto renew period", "client delete prohibited"), DropPhase.AUTO_RENEW),
        # A deleted name is EPP pendingDelete during its redemption period too (RFC 3915).
        (("pending delete", "redemption period"), DropPhase.REDEMPTION),
        (("pending delete",), DropPhase.PENDING_DELETE),
        (("redemption period", "pending restore"), DropPhase.PENDING_RESTORE),
    ],
)
def test_the_phase_a_status_list_shows(statuses: tuple[str, ...], phase: DropPhase) -> None:
    assert drop_phase(statuses) is phase


def facts(
    domain: str,
    phase: DropPhase,
    *,
    seen: date = TODAY,
    last_changed: date | None = None,
    expires: date | None = None,
) -> PhaseFacts:
    return PhaseFacts(domain, phase, seen, last_changed, expires)


@pytest.mark.parametrize("tld", sorted(GRACE_PERIODS))
def test_every_tld_in_the_table_counts_its_own_periods(tld: str) -> None:
    periods = GRACE_PERIODS[tld]
    changed = date(2026, 12, 14)
    pending = estimate_drop(
        facts(f"x.{tld}", DropPhase.PENDING_DELETE, last_changed=changed), TODAY
    )
    redemption = estimate_drop(facts(f"x.{tld}", DropPhase.REDEMPTION, last_changed=changed), TODAY)
    assert pending.drops_on is not None and redemption.drops_on is not None
    assert (pending.drops_on - changed).days == periods.pending_delete_days
    assert (redemption.drops_on - changed).days == (
        periods.redemption_days + periods.pending_delete_days
    )


def test_com_and_net_follow_verisigns_45_30_5() -> None:
    changed = date(2026, 12, 14)
    pending = estimate_drop(
        facts("example.com", DropPhase.PENDING_DELETE, last_changed=changed), TODAY
    )
    assert pending.drops_on == date(2026, 12, 19)
    assert not pending.latest
    assert "pendingDelete since 2026-12-14 (last changed) + 5 days" in pending.basis
    redemption = estimate_drop(
        facts("example.net", DropPhase.REDEMPTION, last_changed=date(2026, 12, 1)), TODAY
    )
    assert redemption.drops_on == date(2027, 1, 5)  # + 30 + 5
    expired = estimate_drop(
        facts("example.com", DropPhase.AUTO_RENEW, expires=date(2026, 12, 10)), TODAY
    )
    assert expired.drops_on == date(2027, 2, 28)  # + 45 + 30 + 5: a bound, not a day
    assert expired.latest and "may delete it sooner" in expired.basis


def test_an_auto_renewed_expiry_falls_back_to_the_phase_start() -> None:
    """Verisign's registry moves the expiration on a year at expiry: it says nothing then."""
    estimate = estimate_drop(
        facts(
            "example.com",
            DropPhase.AUTO_RENEW,
            seen=date(2026, 12, 12),
            expires=date(2027, 12, 10),
        ),
        TODAY,
    )
    assert estimate.drops_on == date(2027, 3, 2)  # 2026-12-12 + 80


def test_a_last_changed_date_that_does_not_fit_is_not_used() -> None:
    stale = estimate_drop(
        facts(
            "example.org",
            DropPhase.PENDING_DELETE,
            seen=date(2026, 12, 15),
            last_changed=date(2026, 6, 1),  # the phase would be long over: not its start
        ),
        TODAY,
    )
    assert stale.drops_on == date(2026, 12, 20)
    assert "seen since 2026-12-15" in stale.basis
    later = estimate_drop(
        facts(
            "example.org",
            DropPhase.PENDING_DELETE,
            seen=date(2026, 12, 13),
            last_changed=date(2026, 12, 15),  # changed after we saw the phase: another update
        ),
        TODAY,
    )
    assert later.drops_on == date(2026, 12, 18)


def test_an_unknown_tld_gets_no_estimate_and_says_so() -> None:
    estimate = estimate_drop(facts("example.xyz", DropPhase.PENDING_DELETE), TODAY)
    assert estimate.drops_on is None
    assert estimate.basis == "no estimate: .xyz is not in the grace-period table"
    assert estimate_drop(facts("example.com", DropPhase.NONE), TODAY).drops_on is None
    restore = estimate_drop(facts("example.com", DropPhase.PENDING_RESTORE), TODAY)
    assert restore.drops_on is None and "restore" in restore.basis


def test_a_notice_is_due_once_per_change() -> None:
    assert not drop_notice_due(None, DropPhase.NONE)  # where names start
    assert drop_notice_due(None, DropPhase.PENDING_DELETE)  # first seen already on its way
    assert drop_notice_due("none", DropPhase.REDEMPTION)
    assert not drop_notice_due("redemption_period", DropPhase.REDEMPTION)
    assert drop_notice_due("redemption_period", DropPhase.PENDING_DELETE)
    assert drop_notice_due("redemption_period", DropPhase.NONE)  # renewed or restored


def test_the_schema_allows_exactly_the_phases() -> None:
    assert tuple(phase.value for phase in DropPhase) == DROP_PHASES
