"""Renewal prices as registrars charge them (ADR 0046): the lookup order, registrar aliases,
unknown TLDs, the source label where renewal costs are shown, and the bundled table's
integrity."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from dominus.errors import ConfigurationError
from dominus.portfolio.model import PortfolioEntry
from dominus.portfolio.renewal_prices import default_pricing, entry_renewal_price
from dominus.portfolio.report import build_report
from dominus.renewals.check import renewal_notification
from dominus.renewals.model import AlertType, RenewalAlert
from dominus.scoring.prices import PriceTable, TldPrice
from dominus.scoring.renewal_prices import (
    REGISTRAR_ALIASES,
    RenewalPricing,
    bundled_registrar_prices,
    canonical_registrar,
    load_registrar_prices,
    owner_registrar_prices,
    renewal_price,
)

HEADER = "registrar,tld,registration,renewal,transfer,currency,observed_on,date_basis,source,note\n"
SOURCE = "https://example.com/prices"
TABLE = HEADER + (
    f"Namecheap,com,11.28,18.48,11.28,USD,2026-11-02,published,{SOURCE},\n"
    f"GoDaddy,com,11.99,22.99,,USD,2026-11-03,published,{SOURCE},\n"
    f"Porkbun,com,11.08,11.08,11.08,USD,2026-11-04,read,{SOURCE},undated snapshot\n"
    f"Porkbun,ai,72.40,72.40,144.49,USD,2026-11-04,read,{SOURCE},\n"
    f"Namecheap,io,34.98,,34.98,USD,2026-11-02,published,{SOURCE},\n"
)
AT_COST = PriceTable(
    "the test at-cost table",
    "USD",
    (TldPrice("com", 10.46, 10.46, "USD"), TldPrice("ai", 80.0, 80.0, "USD")),
)
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


@pytest.fixture
def pricing(tmp_path: Path) -> RenewalPricing:
    path = tmp_path / "registrar_prices.csv"
    path.write_text(TABLE, encoding="utf-8")
    return RenewalPricing(load_registrar_prices(path), AT_COST, "USD")


def test_the_lookup_order(pricing: RenewalPricing) -> None:
    own = pricing.price("com", renewal_cost=9.0, registrar="Namecheap")
    assert (own.amount, own.kind, own.source) == (9.0, "own", "your renewal cost")
    registrar = pricing.price("com", renewal_cost=None, registrar="Namecheap")
    assert (registrar.amount, registrar.kind) == (18.48, "registrar")
    assert registrar.source == (f"Namecheap renewal .com $18.48 (observed 2026-11-02, {SOURCE})")
    # no registrar, or one the table does not know: the dearest known retail renewal
    for unknown in (None, "Example Registrar"):
        dearest = pricing.price("com", renewal_cost=None, registrar=unknown)
        assert (dearest.amount, dearest.kind) == (22.99, "highest_retail")
        assert dearest.label == "highest known .com renewal (GoDaddy)"
    # the registrar has no renewal for the TLD: the dearest known one, if any
    io = pricing.price("io", renewal_cost=None, registrar="Namecheap")
    assert (io.amount, io.kind) == (None, "unknown")


def test_the_dearest_retail_price_never_goes_below_the_at_cost_price(
    pricing: RenewalPricing,
) -> None:
    # Porkbun's .ai $72.40 is below the at-cost $80: a cost plans on the higher figure
    default = pricing.price("ai", renewal_cost=None, registrar=None)
    assert (default.amount, default.kind) == (80.0, "at_cost")
    assert default.source == "registry at-cost .ai $80.00 (the test at-cost table)"
    # the registrar's own price is what its invoice says, low or not
    porkbun = pricing.price("ai", renewal_cost=None, registrar="Porkbun LLC")
    assert (porkbun.amount, porkbun.kind) == (72.40, "registrar")
    assert "read 2026-11-04 from an undated source" in porkbun.source


def test_an_unknown_tld_has_no_price(pricing: RenewalPricing) -> None:
    unknown = pricing.price(".FR", renewal_cost=None, registrar="Namecheap")
    assert (unknown.amount, unknown.kind, unknown.source) == (
        None, "unknown", "no renewal price known for .fr",
    )  # fmt: skip


def test_tables_in_another_currency_are_not_used(pricing: RenewalPricing) -> None:
    euros = replace(pricing, currency="EUR")
    assert euros.price("com", renewal_cost=None, registrar="Namecheap").kind == "unknown"
    assert euros.price("com", renewal_cost=12.0, registrar=None).kind == "own"


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("GoDaddy.com, LLC", "GoDaddy"),
        ("GoDaddy Operating Company, LLC", "GoDaddy"),
        ("NameCheap, Inc.", "Namecheap"),
        ("namecheap", "Namecheap"),
        ("DYNADOT LLC", "Dynadot"),
        ("Porkbun LLC", "Porkbun"),
        ("Cloudflare, Inc.", "Cloudflare"),
        ("Sav.com, LLC", "Sav"),
        ("Example Registrar", None),
        ("", None),
        (None, None),
    ],
)
def test_registrar_names_match_with_aliases(written: str | None, canonical: str | None) -> None:
    assert canonical_registrar(written) == canonical


def test_the_bundled_table_is_sourced_dated_positive_and_without_duplicates() -> None:
    table = bundled_registrar_prices()
    assert table.currency == "USD" and table.rows
    keys = [(row.registrar, row.tld) for row in table.rows]
    assert len(keys) == len(set(keys))
    for row in table.rows:
        assert row.registrar in REGISTRAR_ALIASES
        assert row.source.startswith("https://") and row.note
        assert date(2020, 1, 1) <= row.observed_on <= date(2026, 12, 31)
        assert row.renewal is not None and row.renewal > 0
        assert row.registration is None or row.registration > 0
        assert row.transfer is None or row.transfer >= 0  # .uk transfers are free


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (f"Porkbun,com,1,2,3,USD,2026-11-04,read,{SOURCE},\n" * 2, "listed twice (first on"),
        ("Porkbun,com,1,2,3,USD,2026-11-04,read,,\n", "source is empty"),
        (f"Porkbun,com,1,2,3,USD,,read,{SOURCE},\n", "observed_on '' is not a date"),
        (f"Porkbun,com,1,2,3,USD,2026-11-04,guessed,{SOURCE},\n", "date_basis 'guessed'"),
        (f"Porkbun,com,1,0,3,USD,2026-11-04,read,{SOURCE},\n", "renewal 0 is not a price"),
        (f"Porkbun,com,1,-2,3,USD,2026-11-04,read,{SOURCE},\n", "finite, non-negative"),
        (f"Porkbun,com,,,,USD,2026-11-04,read,{SOURCE},\n", "a row without any price"),
        (f"Example,com,1,2,3,USD,2026-11-04,read,{SOURCE},\n", "registrar 'Example'"),
    ],
)
def test_a_bad_row_is_refused_with_its_line(tmp_path: Path, row: str, problem: str) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + row, encoding="utf-8")
    with pytest.raises(ConfigurationError, match="registrar price table") as raised:
        load_registrar_prices(path)
    assert problem in str(raised.value) and "line" in str(raised.value)


ENTRY = PortfolioEntry(
    id=1, domain="example.com", tld="com", acquired_at=None, renewal_date=date(2026, 12, 20),
    acquisition_cost=None, renewal_cost=None, currency="USD", registrar="Porkbun LLC",
    current_score=None, expected_value=None, confidence=None, suggested_list_price=None,
    list_price=None, score_details=None, verdict="drop", verdict_reason=None, verdict_at=None,
    scored_at=None, notes=None, status="active", renewals_paid=0.0, created_at=NOW,
    updated_at=NOW,
)  # fmt: skip


def test_the_renewal_alert_names_the_price_it_forecasts() -> None:
    alert = RenewalAlert(
        id=7, entry_id=1, domain="example.com", type=AlertType.IMMINENT, severity="warning",
        renewal_date=ENTRY.renewal_date, days_left=16, created_at=NOW, updated_at=NOW,
        escalated_at=None, acknowledged_at=None, notified_at=None, resolved_at=None,
    )  # fmt: skip
    details = renewal_notification(alert, ENTRY, None, NOW, default_pricing()).details
    assert details["renewal_cost"] == 11.08
    assert details["renewal_price_source"].startswith("Porkbun renewal .com $11.08 (read ")


def test_the_report_counts_which_prices_its_costs_are() -> None:
    entries = [
        ENTRY,
        replace(ENTRY, id=2, domain="example.net", tld="net", registrar=None, renewal_cost=15.0),
        # .ru: no registrar in the bundled table has a sourced price, nor the at-cost table
        replace(ENTRY, id=3, domain="example.ru", tld="ru", registrar=None),
    ]
    report = build_report(entries, [], "USD", NOW, default_pricing())
    assert report["renewal_price_sources"] == {
        "own": 1, "registrar": 1, "highest_retail": 0, "at_cost": 0, "unknown": 1,
    }  # fmt: skip
    assert report["renewals_due"][0]["cost"] == 11.08 + 15.0
    assert report["money_at_risk"]["unknown_cost"] == 1


def test_the_bundled_lookup_for_an_entry() -> None:
    price = entry_renewal_price(replace(ENTRY, registrar="GoDaddy.com, LLC"), default_pricing())
    # GoDaddy has no sourced price in the bundled table: the dearest known .com renewal (Namecheap)
    assert (price.amount, price.kind) == (18.48, "highest_retail")
    assert renewal_price("xyz", renewal_cost=None, registrar=None, registrars=None,
                         at_cost=None).kind == "unknown"  # fmt: skip


OWN_SOURCE = "my GoDaddy invoice 2026-11"
OWN_TABLE = HEADER + (
    f"GoDaddy,com,,23.99,,USD,2026-11-20,published,{OWN_SOURCE},\n"
    f"Spaceship,com,,10.98,,USD,2026-11-21,read,https://example.com/spaceship,\n"
    f"Namecheap,com,,19.98,,USD,2026-11-22,published,{OWN_SOURCE},\n"
)


def test_an_owners_table_goes_over_the_bundled_one(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(OWN_TABLE, encoding="utf-8")
    table = owner_registrar_prices(path)
    pricing = RenewalPricing(table, AT_COST, "USD")
    bundled = bundled_registrar_prices()
    # the owner's GoDaddy price, where the bundled table has none
    godaddy = pricing.price("com", renewal_cost=None, registrar="GoDaddy.com, LLC")
    assert (godaddy.amount, godaddy.kind, godaddy.label) == (
        23.99,
        "registrar",
        "GoDaddy .com renewal",
    )
    assert OWN_SOURCE in godaddy.source
    # the owner's row replaces the bundled one for the same registrar and TLD
    bundled_namecheap = bundled.lookup("Namecheap", "com")
    assert bundled_namecheap is not None and bundled_namecheap.renewal == 18.48
    assert pricing.price("com", renewal_cost=None, registrar="NameCheap, Inc.").amount == 19.98
    # a registrar the bundled table does not know, matched by its name folded the same way
    spaceship = pricing.price("com", renewal_cost=None, registrar="Spaceship, Inc.")
    assert (spaceship.amount, spaceship.kind) == (10.98, "registrar")
    # the bundled rows the owner did not replace are still there
    porkbun_net = bundled.lookup("Porkbun", "net")
    assert porkbun_net is not None
    assert (
        pricing.price("net", renewal_cost=None, registrar="Porkbun").amount == porkbun_net.renewal
    )
    # the dearest known price for a name at an unknown registrar counts the owner's prices too
    assert pricing.price("com", renewal_cost=None, registrar=None).amount == 23.99
    assert len(table.rows) == len(bundled.rows) + 2  # Namecheap .com replaced, two added


def test_an_owners_table_in_another_currency_stands_alone(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(HEADER + f"GoDaddy,de,,14.99,,EUR,2026-11-20,published,{OWN_SOURCE},\n")
    table = owner_registrar_prices(path)
    assert (table.currency, len(table.rows)) == ("EUR", 1)


def test_only_an_owners_table_may_name_other_registrars(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(OWN_TABLE, encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"line 3: registrar 'Spaceship' is not one of"):
        load_registrar_prices(path)
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "Spaceship,com,,10.98,,USD,2026-11-21,read,,\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=rf"REGISTRAR_PRICES_PATH {bad}, line 2: .*source"):
        owner_registrar_prices(bad)
