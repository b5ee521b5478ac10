"""Reading a sales file: `domain,price,date,venue` (and an optional `source`).

Accepted headers, matched without regard to case, quotes or surrounding spaces:
  domain, price (or price_usd), date, venue [, source]       the project's own form
  "Domain","Price","Date","Venue"                             NameBio's export, read as is
Prices may carry a "$" and thousands separators ("$1,250"); dates are ISO (2024-09-17). A row
that cannot be read stops the reading with one line naming the file, its line number and what
is wrong (`SalesFileError`: the CLI prints it and exits 2). Blank lines are skipped.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from dominus.errors import InvalidInputError
from dominus.providers.csvfiles import csv_problem
from dominus.valuation.venues import VenueClass, venue_class

_COLUMNS = {
    "domain": "domain",
    "price": "price",
    "price_usd": "price",
    "date": "date",
    "venue": "venue",
    "source": "source",
}
_REQUIRED = ("domain", "price", "date", "venue")


class SalesFileError(InvalidInputError):
    """The sales file cannot be read."""


@dataclass(frozen=True)
class Sale:
    """One recorded sale (price in US dollars)."""

    domain: str
    price: float
    date: date
    venue: str
    source: str = ""

    @property
    def venue_class(self) -> VenueClass:
        return venue_class(self.venue)


def read_sales(path: Path) -> list[Sale]:
    """Every sale in the CSV file at `path` (see the module docstring)."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return parse_sales(handle, str(path))
    except FileNotFoundError:
        raise SalesFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SalesFileError(f"{path}: is a directory, not a sales file") from None
    except UnicodeDecodeError:
        raise SalesFileError(f"{path}: not a UTF-8 text file") from None
    except OSError as error:
        raise SalesFileError(f"{path}: cannot be read ({error.strerror or error})") from None


def parse_sales(lines: Iterable[str], name: str = "sales") -> list[Sale]:
    """The sales in `lines` (a CSV text with its header); `name` names it in errors."""
    # Strict: a quote that is never closed is an error, not every later row read as one cell
    reader = csv.reader(lines, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise SalesFileError(
            f"{name}: empty file (expected a header domain,price,date,venue)"
        ) from None
    except csv.Error as error:
        raise SalesFileError(f"{name} line 1: {error}") from None
    columns = _columns(header, name)
    sales: list[Sale] = []
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            sales.append(_sale(row, columns, f"{name} line {reader.line_num}"))
    except csv.Error as error:
        raise SalesFileError(f"{name} line {reader.line_num}: {csv_problem(error)}") from None
    return sales


def _columns(header: Sequence[str], name: str) -> dict[str, int]:
    columns: dict[str, int] = {}
    for position, cell in enumerate(header):
        key = _COLUMNS.get(cell.strip().strip('"').strip().lower())
        if key and key not in columns:
            columns[key] = position
    missing = [column for column in _REQUIRED if column not in columns]
    if missing:
        raise SalesFileError(
            f"{name} line 1: the header lacks {', '.join(missing)} "
            "(expected domain,price,date,venue or NameBio's Domain,Price,Date,Venue)"
        )
    return columns


def _sale(row: Sequence[str], columns: dict[str, int], where: str) -> Sale:
    def cell(column: str) -> str:
        position = columns.get(column)
        if position is None or position >= len(row):
            return ""
        return row[position].strip()

    domain = cell("domain").lower().rstrip(".")
    if not domain or "." not in domain or " " in domain or domain.startswith("."):
        raise SalesFileError(f"{where}: domain {cell('domain')!r} is not a domain name")
    return Sale(
        domain=domain,
        price=_price(cell("price"), where),
        date=_date(cell("date"), where),
        venue=cell("venue") or "unknown",
        source=cell("source"),
    )


def _price(text: str, where: str) -> float:
    cleaned = text.replace("$", "").replace(",", "").replace("USD", "").strip()
    try:
        price = float(cleaned)
    except ValueError:
        raise SalesFileError(f"{where}: price {text!r} is not a number") from None
    if not math.isfinite(price) or price <= 0:
        raise SalesFileError(f"{where}: price {text!r} is not a positive amount")
    return price


def _date(text: str, where: str) -> date:
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        raise SalesFileError(f"{where}: date {text!r} is not a date (YYYY-MM-DD)") from None
