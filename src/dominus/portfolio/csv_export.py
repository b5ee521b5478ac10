"""The portfolio as CSV (`portfolio list --csv`, `portfolio report --csv`): RFC 4180 quoting,
CRLF line ends, UTF-8 with a byte order mark, ISO dates, and the formula-injection guard of the
run exports (ADR 0017: a cell starting with =, +, -, @, tab or CR gets a `'` in front). The
column names are the import's field names, so an export imports back unchanged (the columns that
are not fields, like `verdict` and `trademark_mark`, the import ignores)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from typing import Any

from dominus.pipeline.csv_export import BOM, cell
from dominus.portfolio.model import PortfolioEntry

ENTRY_COLUMNS = (
    "domain",
    "tld",
    "status",
    "renewal_date",
    "acquired_at",
    "acquisition_cost",
    "renewal_cost",
    "renewals_paid",
    "currency",
    "registrar",
    "list_price",
    "current_score",
    "expected_value",
    "suggested_list_price",
    "verdict",
    "verdict_reason",
    "trademark_mark",
    "trademark_rule",
    "notes",
    "auto_renew",
    "registrar_status",
)


def _text(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def csv_lines(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Iterator[str]:
    """The BOM and header, then one CRLF line per row, every cell guarded."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([cell(name) for name in columns])
    yield BOM + buffer.getvalue()
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([cell(_text(value)) for value in row])
        yield buffer.getvalue()


def _value(entry: PortfolioEntry, column: str) -> Any:
    """The column's value; the trademark columns are the mark matched and the gate's rule
    (empty when the name matches no mark)."""
    if column in ("trademark_mark", "trademark_rule"):
        risk = entry.trademark
        return None if risk is None else getattr(risk, column.removeprefix("trademark_"))
    return getattr(entry, column)


def entry_rows(entries: Sequence[PortfolioEntry]) -> list[list[Any]]:
    return [[_value(entry, column) for column in ENTRY_COLUMNS] for entry in entries]


def entries_csv(entries: Sequence[PortfolioEntry]) -> Iterator[str]:
    return csv_lines(ENTRY_COLUMNS, entry_rows(entries))
