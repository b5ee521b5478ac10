"""What the registrars' exports say beyond names and dates, and how a file's own rows settle
its date order: auto-renew flags and the registrar's status read (a blank cell never
overwrites), a registry (EPP) status refused as the registrar's, `www.` host names refused
with their line, a column's day/month order proven by any of its cells, and the columns a dry
run reports; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from dominus.jobs.documents import dumped
from dominus.portfolio.csv_import import ImportOptions, ImportRefusedError, PortfolioImporter
from dominus.portfolio.documents import EntryOut, ImportReportOut
from dominus.portfolio.model import EntryFields, PortfolioInputError
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import PortfolioReader

pytestmark = pytest.mark.backends("sqlite", "postgresql")

FIXTURES = Path(__file__).parents[2] / "fixtures" / "portfolio"
NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.csv").read_bytes().decode("utf-8-sig")


def run(service: PortfolioService, text: str, **options: Any) -> dict[str, Any]:
    report = PortfolioImporter(service).run(text, ImportOptions(**options), NOW)
    return dumped(ImportReportOut.of(report))


def flags(service: PortfolioService) -> dict[str, tuple[bool | None, str | None]]:
    return {
        entry.domain: (entry.auto_renew, entry.registrar_status)
        for entry in PortfolioReader(service.engine).list_entries(status=None)
    }


def test_one_month_first_cell_settles_the_columns_order(
    service: PortfolioService, backend: str
) -> None:
    report = run(service, fixture("godaddy-us-dates"), preset="godaddy")
    assert report["refused"] == [] and len(report["added"]) == 3
    renewals = {e.domain: e.renewal_date for e in service.entries()}
    # `1/14/2030` can only be January 14th: `12/9/2030` is December 9th, `2/3/2031` February 3rd
    assert renewals == {
        "example.com": date(2030, 12, 9),
        "example.net": date(2030, 1, 14),
        "example.org": date(2031, 2, 3),
    }


def test_day_first_evidence_reads_the_column_day_first(
    service: PortfolioService, backend: str
) -> None:
    text = "domain,expiry date\nexample.com,03/04/2031\nexample.net,25/12/2030\n"
    run(service, text)
    assert service.get("example.com").renewal_date == date(2031, 4, 3)


def test_a_column_proving_both_orders_is_refused_whole(
    service: PortfolioService, backend: str
) -> None:
    with pytest.raises(PortfolioInputError) as refused:
        run(service, fixture("mixed-date-orders"), skip_invalid=True)
    message = refused.value.message
    assert not isinstance(refused.value, ImportRefusedError)  # the file, not a row
    assert "column 'expiry date' holds day-first (line 2: '14/01/2031')" in message
    assert "month-first (line 3: '1/14/2031')" in message and "--date-format" in message
    assert "\n" not in message
    assert service.entries() == []
    # the format given settles it: the month-first cell is then the bad row
    report = run(service, fixture("mixed-date-orders"), date_format="%d/%m/%Y", skip_invalid=True)
    assert sorted(report["added"]) == ["example.com", "example.org"]
    assert [(p["line"], p["column"]) for p in report["refused"]] == [(3, "expiry date")]


@pytest.mark.parametrize(("name", "preset", "line", "column"), [
    ("namecheap-www", "namecheap", 3, "Domain Name"),
    ("sedo-www", "sedo", 3, "Domain"),
])  # fmt: skip
def test_a_www_host_name_is_refused_with_its_line(
    service: PortfolioService, backend: str, name: str, preset: str, line: int, column: str
) -> None:
    for domain in ("example.com", "example.net"):  # Sedo's listing updates held names
        service.add(domain, EntryFields(renewal_date=date(2030, 9, 1)), NOW)
    with pytest.raises(ImportRefusedError) as refused:
        run(service, fixture(name), preset=preset)
    (problem,) = refused.value.report.refused
    assert (problem.line, problem.column) == (line, column)
    assert "host name (www.), not a domain" in problem.error
    report = run(service, fixture(name), preset=preset, skip_invalid=True)
    assert len(report["refused"]) == 1
    assert not any(domain.startswith("www.") for domain in flags(service))


def test_auto_renew_and_the_registrar_status_are_read(
    service: PortfolioService, backend: str
) -> None:
    run(service, fixture("godaddy-us-dates"), preset="godaddy")
    assert flags(service) == {
        "example.com": (True, "Active"),
        "example.net": (False, "Expired"),
        "example.org": (None, "Active"),
    }
    shown = dumped(EntryOut.of(service.get("example.net"), NOW))
    assert (shown["auto_renew"], shown["registrar_status"], shown["expired_at_registrar"]) == (
        False, "Expired", True,
    )  # fmt: skip


@pytest.mark.parametrize(("name", "preset", "expected"), [
    ("dynadot-auto-renew", "dynadot",
     {"example.org": True, "example.info": False, "example.biz": None}),
    ("namecheap", "namecheap", {"example.xyz": True, "example.co": False}),
    ("networksolutions", "networksolutions", {"example.co": True, "example.org": False}),
    ("sav", "sav", {"example.io": True, "example.ai": False}),
])  # fmt: skip
def test_each_exports_auto_renew_words(
    service: PortfolioService, backend: str, name: str, preset: str, expected: dict[str, Any]
) -> None:
    run(service, fixture(name), preset=preset)
    assert {domain: flag for domain, (flag, _) in flags(service).items()} == expected


def test_a_blank_auto_renew_cell_never_overwrites(service: PortfolioService, backend: str) -> None:
    run(service, fixture("godaddy-us-dates"), preset="godaddy")
    text = (
        "Domain Name,Status,Expiration Date,Auto Renew\n"
        "example.com,,12/9/2030,\n"
        "example.org,,2/3/2031,off\n"
        "example.net,Active,1/14/2030,\n"
    )
    report = run(service, text, preset="godaddy")
    assert report["unchanged"] == ["example.com"]
    assert report["updated"] == [
        {"domain": "example.org", "changes": ["auto_renew"]},
        {"domain": "example.net", "changes": ["registrar_status"]},
    ]
    assert flags(service) == {
        "example.com": (True, "Active"),
        "example.net": (False, "Active"),
        "example.org": (False, "Active"),
    }
    assert run(service, text, preset="godaddy")["updated"] == []  # a re-import changes nothing


def test_a_word_that_is_not_yes_or_no_is_refused(service: PortfolioService, backend: str) -> None:
    text = "domain,expiry date,auto renew\nexample.com,2030-05-01,sometimes\n"
    with pytest.raises(ImportRefusedError) as refused:
        run(service, text)
    (problem,) = refused.value.report.refused
    assert (problem.line, problem.column) == (2, "auto renew")
    assert "not a yes/no value" in problem.error


def test_a_registry_status_is_not_the_registrars(service: PortfolioService, backend: str) -> None:
    report = run(service, fixture("hexonet"))
    assert "Status" in report["ignored_columns"]
    assert flags(service) == {"example.de": (None, None), "example.eu": (None, None)}
    with pytest.raises(ImportRefusedError) as refused:
        run(service, fixture("hexonet"), mapping={"registrar_status": "Status"})
    (problem,) = refused.value.report.refused
    assert (problem.line, problem.column) == (2, "Status")
    assert "registry (EPP) status, not the registrar's" in problem.error


@pytest.mark.parametrize(("name", "columns", "ignored"), [
    ("godaddy", {"domain": "Domain Name", "renewal_date": "Expiration Date",
                 "renewal_cost": "Renewal Price", "auto_renew": "Auto Renew",
                 "registrar_status": "Status"},
     ["Created Date", "Folder", "Estimated Value", "Registrant Name", "Registrant Email"]),
    ("dynadot", {"domain": "Domain", "renewal_date": "Expiration Date", "notes": "Note",
                 "auto_renew": "Auto Renew"},
     ["Registration Date (column 3)", "Registration Date (column 4)", "Folder"]),
    ("sedo", {"domain": "Domain", "list_price": "Price", "currency": "Currency"},
     ["Minimum Offer", "Currency (column 5)"]),
])  # fmt: skip
def test_the_dry_run_reports_which_column_fed_which_field(
    service: PortfolioService,
    backend: str,
    name: str,
    columns: dict[str, str],
    ignored: list[str],
) -> None:
    report = run(service, fixture(name), preset=name, dry_run=True, skip_invalid=True)
    assert report["columns"] == columns and report["ignored_columns"] == ignored
