"""Every judgement rewrites a verdict's reason, its figures and its time, even when the verdict
stays; the history gains a row only when the verdict changes. On SQLite and PostgreSQL.
Scoring defaults: P(sale in a year) = 0.01 × confidence / 0.8, commission 0.20; .com renews at
$10.46 in the bundled price table."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from dominus.config import Settings
from dominus.portfolio.model import EntryFields, ScoreUpdate
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import PortfolioReader

pytestmark = pytest.mark.backends("sqlite", "postgresql")

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def score(ev: float, points: float = 50.0) -> ScoreUpdate:
    return ScoreUpdate(points, ev, 0.8, ev * 1.5, {"tier": "speculative"})


def history_length(service: PortfolioService, domain: str) -> int:
    return len(PortfolioReader(service.engine).list_history(domain))


def test_a_rescored_name_no_longer_reads_not_scored_yet(service: PortfolioService) -> None:
    # Listed at $5,000, far above 2.5 × EV: reprice before the score (not scored) and after it
    # (overpriced), so the verdict stays while its reason must not.
    service.add("example.com", EntryFields(renewal_date=date(2030, 9, 1), list_price=5000.0), NOW)
    assert "not scored yet" in (service.get("example.com").verdict_reason or "")
    later = NOW + timedelta(days=1)
    assert service.record_score("example.com", score(1000.0), later) == []
    entry = service.get("example.com")
    assert entry.verdict == "reprice"
    assert entry.verdict_reason is not None and "not scored" not in entry.verdict_reason
    assert entry.verdict_reason.startswith("listed at $5,000, above 2.5 × EV $1,000")
    assert entry.verdict_at == later
    assert history_length(service, "example.com") == 1  # the first verdict only


def test_a_judgement_ten_days_later_states_the_past_due_figure(
    service: PortfolioService,
) -> None:
    service.add("example.com", EntryFields(renewal_date=date(2030, 1, 5)), NOW)
    service.record_score("example.com", score(100.0), NOW)  # $0.80 < $10.46: drop
    before = service.get("example.com")
    assert before.verdict == "drop" and "renewal in 4 days" in (before.verdict_reason or "")
    rows = history_length(service, "example.com")

    ten_days_on = NOW + timedelta(days=10)
    assert service.refresh_verdicts(ten_days_on) == []  # the verdict stays: no change listed
    after = service.get("example.com")
    assert after.verdict == "drop"
    assert after.verdict_reason is not None and "renewal 6 days past due" in after.verdict_reason
    assert "renewal in 4 days" not in after.verdict_reason
    assert after.verdict_at == ten_days_on
    assert history_length(service, "example.com") == rows


def test_switching_the_drop_method_rewrites_the_reason(
    service: PortfolioService, settings: Settings
) -> None:
    # Score 10 < 25 and renewals paid recoup the acquisition: drop by threshold; EV $100 gives
    # $0.80 a year < the $10.46 renewal: drop by expected.
    service.add(
        "example.com",
        EntryFields(renewal_date=date(2030, 1, 20), acquisition_cost=10.0, renewals_paid=10.0),
        NOW,
    )
    service.record_score("example.com", score(100.0, points=10.0), NOW)
    expected = service.get("example.com")
    assert expected.verdict == "drop" and "expected sale value" in (expected.verdict_reason or "")
    rows = history_length(service, "example.com")

    by_threshold = PortfolioService(
        service.engine, settings.model_copy(update={"DROP_METHOD": "threshold"})
    )
    later = NOW + timedelta(hours=1)
    assert by_threshold.refresh_verdicts(later) == []
    entry = by_threshold.get("example.com")
    assert entry.verdict == "drop"
    assert entry.verdict_reason is not None
    assert entry.verdict_reason.startswith("score 10 below 25 with renewal in 19 days")
    assert "expected sale value" not in entry.verdict_reason
    assert entry.verdict_at == later
    assert history_length(service, "example.com") == rows


def test_a_changed_verdict_is_still_kept_in_the_history(service: PortfolioService) -> None:
    service.add("example.com", EntryFields(renewal_date=date(2030, 1, 20)), NOW)
    changes = service.record_score("example.com", score(100.0), NOW)
    assert [(change.old, change.new) for change in changes] == [("reprice", "drop")]
    history = PortfolioReader(service.engine).list_history("example.com")
    assert [(event.old_verdict, event.new_verdict) for event in history] == [
        (None, "reprice"),
        ("reprice", "drop"),
    ]
