"""The report's "turn off auto-renew" list: drop-verdict names the registrar renews by itself,
and those whose auto-renew is not known, soonest renewal first."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

from dominus.portfolio.model import PortfolioEntry
from dominus.portfolio.report import build_report

NOW = datetime(2030, 11, 15, 23, 30, tzinfo=UTC)

BASE = PortfolioEntry(
    id=1, domain="example.com", tld="com", acquired_at=None, renewal_date=date(2030, 12, 1),
    acquisition_cost=None, renewal_cost=10.0, currency="USD", registrar=None,
    current_score=None, expected_value=None, confidence=None, suggested_list_price=None,
    list_price=None, score_details=None, verdict="drop", verdict_reason="", verdict_at=None,
    scored_at=None, notes=None, status="active", renewals_paid=0.0, created_at=NOW,
    updated_at=NOW, auto_renew=True,
)  # fmt: skip


def test_drop_names_with_auto_renew_on_or_unknown_are_listed() -> None:
    entries = [
        replace(BASE, domain="late.com", renewal_date=date(2031, 3, 1)),
        BASE,
        replace(BASE, domain="off.com", auto_renew=False),  # lapses by itself
        replace(BASE, domain="unknown.com", auto_renew=None, renewal_cost=None),
        replace(BASE, domain="kept.com", verdict="keep"),  # renewing it is right
        replace(BASE, domain="reprice.com", verdict="reprice"),
        replace(BASE, domain="sold.com", status="sold"),  # no longer held
    ]
    report = build_report(entries, [], "USD", NOW)
    assert report["turn_off_auto_renew"] == [
        {"domain": "example.com", "renewal_date": "2030-12-01", "renewal_cost": 10.0},
        {"domain": "late.com", "renewal_date": "2031-03-01", "renewal_cost": 10.0},
    ]
    assert report["check_auto_renew"] == [
        {"domain": "unknown.com", "renewal_date": "2030-12-01", "renewal_cost": None}
    ]


def test_nothing_to_turn_off() -> None:
    report = build_report([replace(BASE, verdict="keep")], [], "USD", NOW)
    assert (report["turn_off_auto_renew"], report["check_auto_renew"]) == ([], [])
