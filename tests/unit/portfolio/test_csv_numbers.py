"""The portfolio's CSV exports write numbers as numbers: a loss is `-1868.89`, which a
spreadsheet sums, not the text `'-1868.89`; text that starts a formula is still guarded."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import date

from dominus.portfolio.csv_export import csv_lines, entries_csv
from dominus.portfolio.model import Outcome
from dominus.portfolio.report import REPORT_COLUMNS, build_report, report_rows
from tests.unit.portfolio.test_report import BASE, NOW


def parse(lines: list[str]) -> list[dict[str, str]]:
    text = "".join(lines).removeprefix("\ufeff")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_a_loss_in_the_report_is_a_number() -> None:
    sold = replace(BASE, acquisition_cost=2000.0, renewals_paid=0.0, status="sold")
    outcome = Outcome(1, "example.com", "sold", 131.11, "USD", date(2030, 5, 1), None, 0.0,
                      2000.0, None, NOW)  # fmt: skip
    report = build_report([sold], [outcome], "USD", NOW)
    rows = parse(list(csv_lines(REPORT_COLUMNS, report_rows(report))))
    realised = next(row for row in rows if row["section"] == "realised")
    assert realised["profit"] == "-1868.89"
    assert float(realised["profit"]) == -1868.89


def test_an_entry_exports_its_figures_as_numbers_and_guards_its_text() -> None:
    entry = replace(BASE, notes='=HYPERLINK("http://evil.example")', expected_value=-0.5)
    (row,) = parse(list(entries_csv([entry])))
    assert row["expected_value"] == "-0.5"
    assert row["acquisition_cost"] == "100.0"
    assert row["notes"] == '\'=HYPERLINK("http://evil.example")'
