"""Entries, verdict refreshes (only changes written, each in the history) and the ledger, on
SQLite and PostgreSQL. Scoring defaults: P(sale in a year) = 0.01 × confidence / 0.8,
commission 0.20; an unset .com renewal is priced at $18.48 (the dearest known retail
renewal in the bundled registrar table, ADR 0046)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from dominus.portfolio.model import (
    EntryExistsError,
    EntryFields,
    EntryNotFoundError,
    PortfolioInputError,
    ScoreUpdate,
)
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import PortfolioReader

pytestmark = pytest.mark.backends("sqlite", "postgresql")


NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def score(ev: float, confidence: float = 0.8, points: float = 50.0) -> ScoreUpdate:
    return ScoreUpdate(points, ev, confidence, ev * 1.5, {"tier": "speculative"})


def test_add_defaults_the_renewal_cost_and_judges_the_unscored_name(
    service: PortfolioService, backend: str
) -> None:
    entry = service.add(
        "Example.COM", EntryFields(renewal_date=date(2030, 1, 31), acquisition_cost=100.0), NOW
    )
    assert (entry.domain, entry.tld, entry.currency) == ("example.com", "com", "USD")
    # no renewal cost given: none stored; the lookup prices it (the dearest known .com renewal)
    assert entry.renewal_cost is None
    assert service.renewal_price(entry).amount == 18.48
    assert entry.verdict == "reprice" and entry.verdict_reason is not None
    assert "not scored" in entry.verdict_reason
    with pytest.raises(EntryExistsError):
        service.add("example.com", EntryFields(renewal_date=date(2030, 2, 1)), NOW)
    with pytest.raises(PortfolioInputError, match="renewal date is required"):
        service.add("other.com", EntryFields(), NOW)
    with pytest.raises(PortfolioInputError, match="negative"):
        service.add("other.com", EntryFields(date(2030, 2, 1), acquisition_cost=-1.0), NOW)
    with pytest.raises(PortfolioInputError, match="invalid domain"):
        service.add("not a domain", EntryFields(date(2030, 2, 1)), NOW)


def test_only_changed_verdicts_are_written_and_each_change_is_history(
    service: PortfolioService, backend: str
) -> None:
    service.add("example.com", EntryFields(renewal_date=date(2030, 1, 31)), NOW)
    # EV 100 × 0.80 × 1 % = $0.80 a year < renewal $18.48, 30 days away: drop
    changes = service.record_score("example.com", score(100.0), NOW)
    assert [(c.old, c.new) for c in changes] == [("reprice", "drop")]
    assert "renewal $18.48 > expected sale value $0.80 this year" in changes[0].reason
    assert changes[0].reason.endswith("[renewal price: highest known .com renewal (Namecheap)]")
    # the same facts a day later: the same verdict, nothing written
    assert service.refresh_verdicts(NOW + timedelta(days=1)) == []
    # EV 3000: $24 > $18.48: keep
    changes = service.record_score("example.com", score(3000.0), NOW + timedelta(days=2))
    assert [(c.old, c.new) for c in changes] == [("drop", "keep")]
    history = PortfolioReader(service.engine).list_history("example.com")
    assert [(e.old_verdict, e.new_verdict, e.method) for e in history] == [
        (None, "reprice", "expected"),
        ("reprice", "drop", "expected"),
        ("drop", "keep", "expected"),
    ]
    entry = service.get("example.com")
    assert entry.verdict == "keep" and entry.verdict_at == NOW + timedelta(days=2)
    assert entry.current_score == 50.0 and entry.suggested_list_price == 4500.0


def test_a_blank_value_never_overwrites(service: PortfolioService, backend: str) -> None:
    service.add(
        "example.com",
        EntryFields(renewal_date=date(2030, 6, 1), registrar="Example Registrar", notes="keep"),
        NOW,
    )
    entry = service.update("example.com", EntryFields(list_price=900.0), NOW)
    assert entry.registrar == "Example Registrar" and entry.notes == "keep"
    assert entry.list_price == 900.0
    with pytest.raises(EntryNotFoundError):
        service.update("missing.com", EntryFields(list_price=1.0), NOW)


def test_sold_and_dropped_names_close_with_an_outcome(
    service: PortfolioService, backend: str
) -> None:
    service.add(
        "sold.com",
        EntryFields(renewal_date=date(2030, 6, 1), acquisition_cost=100.0, renewals_paid=20.92),
        NOW,
    )
    service.add(
        "dropped.com", EntryFields(renewal_date=date(2030, 2, 1), acquisition_cost=8.0), NOW
    )
    sale = service.sold("sold.com", price=1500.0, fees=225.0, venue="Example Market", now=NOW)
    # 1500 − 225 − 100 − 20.92
    assert sale["realised_profit"] == 1154.08 and sale["cost"] == 120.92
    dropped = service.drop("dropped.com", on=date(2029, 12, 30), now=NOW)
    assert dropped["sunk_cost"] == 8.0
    reader = PortfolioReader(service.engine)
    assert [e.domain for e in reader.list_entries()] == []
    assert {e.domain: e.status for e in reader.list_entries(status=None)} == {
        "sold.com": "sold",
        "dropped.com": "dropped",
    }
    sold_outcome, dropped_outcome = sorted(reader.list_outcomes(), key=lambda o: o.type)[::-1]
    assert (sold_outcome.type, sold_outcome.sale_price, sold_outcome.fees) == ("sold", 1500, 225)
    assert sold_outcome.date == date(2030, 1, 1) and sold_outcome.cost_basis == 120.92
    assert (dropped_outcome.type, dropped_outcome.date) == ("dropped", date(2029, 12, 30))
    assert [e.kind for e in reader.list_history("sold.com")] == ["verdict", "sold"]
    with pytest.raises(PortfolioInputError, match="already sold"):
        service.drop("sold.com", now=NOW)
    # closed names are no longer judged
    assert service.refresh_verdicts(NOW + timedelta(days=400)) == []


def test_a_name_with_no_acquisition_cost_closes_with_its_cost_unknown(
    service: PortfolioService, backend: str
) -> None:
    for name in ("sold.com", "dropped.com"):
        service.add(name, EntryFields(renewal_date=date(2030, 6, 1), renewals_paid=10.0), NOW)
    sale = service.sold("sold.com", price=1500.0, fees=225.0, now=NOW)
    assert (sale["cost"], sale["realised_profit"], sale["cost_unknown"]) == (None, None, True)
    dropped = service.drop("dropped.com", now=NOW)
    assert (dropped["sunk_cost"], dropped["realised_profit"]) == (None, None)
    assert dropped["cost_unknown"] is True
    reader = PortfolioReader(service.engine)
    assert [outcome.cost_basis for outcome in reader.list_outcomes()] == [None, None]
    (_, closed) = reader.list_history("sold.com")
    assert "cost unknown" in closed.reason and "realised profit" not in closed.reason


def test_the_ledger_refuses_a_day_after_today_and_writes_nothing(
    service: PortfolioService, backend: str
) -> None:
    service.add("example.com", EntryFields(renewal_date=date(2030, 6, 1)), NOW)
    tomorrow = date(2030, 1, 2)
    with pytest.raises(PortfolioInputError, match="date 2030-01-02 is after today") as refused:
        service.sold("example.com", price=10.0, on=tomorrow, now=NOW)
    assert refused.value.code == "invalid_outcome"
    with pytest.raises(PortfolioInputError, match="date 2030-01-02 is after today"):
        service.drop("example.com", on=tomorrow, now=NOW)
    reader = PortfolioReader(service.engine)
    assert reader.list_outcomes() == [] and service.get("example.com").status == "active"
    # today itself is accepted
    assert service.drop("example.com", on=date(2030, 1, 1), now=NOW)["date"] == "2030-01-01"
