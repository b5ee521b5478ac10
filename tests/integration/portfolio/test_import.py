"""CSV import: a synthetic fixture per preset, header aliases, the all-or-nothing default,
--skip-invalid, blank cells, ambiguous dates, re-imports and the export round trip; on SQLite
and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from dominus.jobs.documents import dumped
from dominus.portfolio.csv_export import entries_csv
from dominus.portfolio.csv_import import (
    ImportOptions,
    ImportRefusedError,
    PortfolioImporter,
    parse_mapping,
)
from dominus.portfolio.documents import ImportReportOut
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


def snapshot(service: PortfolioService) -> dict[str, dict[str, Any]]:
    keep = ("renewal_date", "acquired_at", "acquisition_cost", "renewal_cost", "registrar",
            "list_price", "renewals_paid", "notes", "verdict", "updated_at")  # fmt: skip
    return {
        entry.domain: {key: getattr(entry, key) for key in keep}
        for entry in PortfolioReader(service.engine).list_entries(status=None)
    }


# preset → {domain: {field: value}} read from its fixture
PRESET_CASES: dict[str, dict[str, dict[str, Any]]] = {
    "godaddy": {
        "example.com": {"renewal_date": date(2030, 3, 4), "renewal_cost": 18.99,
                        "registrar": "GoDaddy"},
        "example.net": {"renewal_date": date(2030, 11, 20), "renewal_cost": 1021.99},
    },
    "dynadot": {
        "example.org": {"renewal_date": date(2030, 11, 24), "notes": "brandable, short",
                        "registrar": "Dynadot", "renewal_cost": None},
        "example.info": {"renewal_date": date(2031, 2, 1), "notes": None},
    },
    "namecheap": {
        "example.xyz": {"renewal_date": date(2030, 12, 13), "registrar": "Namecheap"},
        "example.co": {"renewal_date": date(2031, 1, 2)},
    },
    "networksolutions": {
        "example.co": {"renewal_date": date(2030, 3, 4), "registrar": "Network Solutions"},
        "example.org": {"renewal_date": date(2030, 12, 31)},
    },
    "sav": {
        "example.io": {"renewal_date": date(2030, 1, 2), "acquired_at": date(2021, 1, 2),
                       "acquisition_cost": 150.0, "list_price": 2500.0, "registrar": "Sav"},
        "example.ai": {"renewal_date": date(2030, 6, 7), "acquisition_cost": None,
                       "list_price": None, "renewal_cost": None},
    },
    "parkio": {
        "example.io": {"renewal_date": date(2030, 4, 5), "acquired_at": date(2023, 4, 5),
                       "acquisition_cost": 75.0, "registrar": None},
    },
}  # fmt: skip


@pytest.mark.parametrize("preset", sorted(PRESET_CASES))
def test_registrar_presets(service: PortfolioService, backend: str, preset: str) -> None:
    report = run(service, fixture(preset), preset=preset)
    expected = PRESET_CASES[preset]
    assert sorted(report["added"]) == sorted(expected) and report["refused"] == []
    entries = snapshot(service)
    for domain, values in expected.items():
        for key, value in values.items():
            assert entries[domain][key] == value, (domain, key)


def listed(service: PortfolioService, *domains: str) -> None:
    for domain in domains:
        service.add(domain, EntryFields(renewal_date=date(2030, 9, 1), acquisition_cost=30.0), NOW)


def test_efty_preset(service: PortfolioService, backend: str) -> None:
    listed(service, "example.com", "example.net")
    report = run(service, fixture("efty"), preset="efty")
    assert report["updated"] == [
        # the file's renewal price is the owner's own: it fills the unset renewal cost
        {"domain": "example.com", "changes": ["acquired_at", "list_price", "renewal_cost"]}
    ]
    # "0.00" is not set: the stored $30 stays; sold rows are skipped, not errors
    assert report["skipped"] == [
        {"line": 3, "domain": "example.net", "reason": "marked sold in the file"}
    ]
    entry = service.get("example.com")
    assert (entry.list_price, entry.acquisition_cost, entry.acquired_at) == (
        4999.0, 30.0, date(2021, 1, 15),
    )  # fmt: skip


def test_afternic_preset(service: PortfolioService, backend: str) -> None:
    listed(service, "example.com", "example.org")
    report = run(service, fixture("afternic"), preset="afternic")
    assert report["updated"] == [{"domain": "example.com", "changes": ["list_price"]}]
    assert report["unchanged"] == ["example.org"]  # "0" means not set
    assert service.get("example.com").list_price == 2500.0


def test_sedo_preset(service: PortfolioService, backend: str) -> None:
    listed(service, "example.com", "example.net")
    report = run(service, fixture("sedo"), preset="sedo")
    assert [item["domain"] for item in report["updated"]] == ["example.com", "example.net"]
    assert service.get("example.net").list_price == 1200.0


def test_a_new_name_without_a_renewal_date_is_refused(
    service: PortfolioService, backend: str
) -> None:
    with pytest.raises(ImportRefusedError) as refused:
        run(service, fixture("afternic"), preset="afternic")
    assert "line 2" in refused.value.message and "no renewal date" in refused.value.message
    assert snapshot(service) == {}


def test_aliases_without_a_preset(service: PortfolioService, backend: str) -> None:
    text = (
        "*Name (Required),Expiry Date,Purchase Price,Paid Date,Comments,Sponsoring Registrar\n"
        'example.com,2030-05-01,"1,250.00",2024-01-31,first,Example Registrar\n'
    )
    run(service, text)
    entry = service.get("example.com")
    assert (entry.renewal_date, entry.acquisition_cost, entry.acquired_at) == (
        date(2030, 5, 1), 1250.0, date(2024, 1, 31),
    )  # fmt: skip
    assert (entry.notes, entry.registrar, entry.renewal_cost) == (
        "first",
        "Example Registrar",
        None,  # not in the file: priced when used (ADR 0046), not stored as the owner's
    )


def test_renewal_date_header_only_without_an_expiry_column(
    service: PortfolioService, backend: str
) -> None:
    text = "domain,Renewal Date,Expiration Date\nexample.com,2031-01-01,2030-06-01\n"
    run(service, text)
    assert service.get("example.com").renewal_date == date(2030, 6, 1)


def test_invalid_rows_are_reported_and_nothing_is_written(
    service: PortfolioService, backend: str
) -> None:
    text = (
        "domain,expiry date,purchase price\n"
        "example.com,2030-05-01,10\n"
        "example.net,03/04/2030,10\n"
        "not a domain,2030-05-01,10\n"
        "example.org,2030-05-01,-5\n"
        "example.com,2030-05-01,10\n"
    )
    with pytest.raises(ImportRefusedError) as refused:
        run(service, text)
    problems = dumped(ImportReportOut.of(refused.value.report))["refused"]
    assert [(p["line"], p["column"]) for p in problems] == [
        (3, "expiry date"),
        (4, "domain"),
        (5, "purchase price"),
        (6, "domain"),
    ]
    assert "ambiguous" in problems[0]["error"] and "--date-format" in problems[0]["error"]
    assert "negative" in problems[2]["error"]
    assert "appears again (first on line 2)" in problems[3]["error"]
    assert snapshot(service) == {}

    report = run(service, text, skip_invalid=True)
    assert report["added"] == ["example.com"] and len(report["refused"]) == 4
    assert list(snapshot(service)) == ["example.com"]


# (header, cell, what the refusal says): values PostgreSQL cannot store (NUL) or its columns
# cannot hold, and that SQLite would keep until a `db copy` to PostgreSQL failed on them.
OUT_OF_BOUNDS = {
    "nul-in-notes": ("notes", "a\x00b", "holds a NUL character"),
    "long-notes": ("notes", "n" * 10_001, "longer than 10,000 characters"),
    "nul-in-registrar": ("registrar", "Reg\x00istrar", "holds a NUL character"),
    "long-registrar": ("registrar", "r" * 201, "longer than 200 characters"),
    "huge-amount": ("purchase price", "1" + "0" * 13, "over the largest amount"),
}


@pytest.mark.parametrize("case", OUT_OF_BOUNDS.values(), ids=OUT_OF_BOUNDS.keys())
def test_a_value_out_of_the_apis_bounds_is_refused_with_its_line_and_column(
    service: PortfolioService, backend: str, case: tuple[str, str, str]
) -> None:
    header, cell, said = case
    text = (
        f'domain,expiry date,{header}\nexample.com,2030-05-01,\nexample.net,2030-05-01,"{cell}"\n'
    )
    with pytest.raises(ImportRefusedError) as refused:
        run(service, text)
    [problem] = refused.value.report.refused
    assert (problem.line, problem.column) == (3, header)
    assert said in problem.error
    assert f"line 3, column {header!r}: {said}" in refused.value.message
    assert snapshot(service) == {}
    # With --skip-invalid the other rows are written, and the database never sees the bad one.
    report = run(service, text, skip_invalid=True)
    assert report["added"] == ["example.com"] and len(report["refused"]) == 1
    assert list(snapshot(service)) == ["example.com"]


def test_a_date_format_settles_ambiguous_dates(service: PortfolioService, backend: str) -> None:
    text = "domain,expiry date\nexample.com,03/04/2030\n"
    run(service, text, date_format="%d/%m/%Y")
    assert service.get("example.com").renewal_date == date(2030, 4, 3)


def test_decimal_comma(service: PortfolioService, backend: str) -> None:
    text = "domain;expiry date;purchase price\nexample.com;2030-05-01;1.250,50\n"
    with pytest.raises(ImportRefusedError, match="give --decimal-comma"):
        run(service, text)
    run(service, text, decimal_comma=True)
    assert service.get("example.com").acquisition_cost == 1250.5


def test_a_missing_mapped_column_is_named(service: PortfolioService, backend: str) -> None:
    with pytest.raises(PortfolioInputError, match="column 'Expires At' \\(mapped to renewal_date"):
        run(service, "domain,expiry\nexample.com,2030-01-01\n",
            mapping=parse_mapping("renewal_date=Expires At"))  # fmt: skip
    with pytest.raises(PortfolioInputError, match="unknown field"):
        parse_mapping("colour=Colour")
    with pytest.raises(PortfolioInputError, match="unknown preset"):
        run(service, "domain\nexample.com\n", preset="nowhere")


def test_an_explicit_map_reads_ambiguous_headers(service: PortfolioService, backend: str) -> None:
    text = "Site,When,Amount\nexample.com,2030-07-01,99\n"
    with pytest.raises(PortfolioInputError, match="no domain column"):
        run(service, text)
    mapping = parse_mapping("domain=Site,renewal_date=When,acquisition_cost=Amount")
    run(service, text, mapping=mapping)
    assert service.get("example.com").acquisition_cost == 99.0


def test_blank_cells_never_overwrite_and_reimport_changes_nothing(
    service: PortfolioService, backend: str
) -> None:
    text = "domain,expiry date,purchase price,notes\nexample.com,2030-05-01,10,first\n"
    run(service, text)
    before = snapshot(service)
    history = PortfolioReader(service.engine).list_history()
    again = run(service, text)
    assert (again["added"], again["updated"], again["unchanged"]) == ([], [], ["example.com"])
    assert snapshot(service) == before
    assert PortfolioReader(service.engine).list_history() == history
    blanks = "domain,expiry date,purchase price,notes\nexample.com,,,\n"
    assert run(service, blanks)["unchanged"] == ["example.com"]
    assert snapshot(service) == before


def test_dry_run_writes_nothing(service: PortfolioService, backend: str) -> None:
    listed(service, "example.com")
    before = snapshot(service)
    text = "domain,expiry date,list price\nexample.com,2030-05-01,500\nexample.net,2030-05-01,\n"
    report = run(service, text, dry_run=True)
    assert report["dry_run"] and report["added"] == ["example.net"]
    assert report["updated"] == [
        {"domain": "example.com", "changes": ["list_price", "renewal_date"]}
    ]
    assert snapshot(service) == before


def test_import_export_import_round_trip(
    service: PortfolioService, engine: Any, backend: str
) -> None:
    run(service, fixture("sav"), preset="sav")
    run(service, fixture("godaddy"), preset="godaddy")
    service.update("example.com", EntryFields(notes='=HYPERLINK("x"), with a comma'), NOW)
    exported = "".join(entries_csv(service.entries()))
    assert exported.startswith("\ufeffdomain,tld,status,renewal_date")
    assert "\r\n" in exported and "'=HYPERLINK" in exported
    before = snapshot(service)
    again = run(service, exported.lstrip("\ufeff"))
    assert again["updated"] == [] and again["refused"] == []
    assert sorted(again["unchanged"]) == sorted(before)
    assert snapshot(service) == before
    assert service.get("example.com").notes == '=HYPERLINK("x"), with a comma'
