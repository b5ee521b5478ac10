"""Comparable domain sales from a local file: DOMINUS's own CSV
(`domain,price,currency,sale_date,venue`), or an export as it is saved (`sales_exports`): a
NameBio export (`domain,price_usd,date,venue`), or a marketplace's sold report whose columns
go by the usual names. Told apart by the header."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dominus.providers.csvfiles import parse_date, parse_number, read_rows
from dominus.providers.errors import ProviderDataError
from dominus.providers.models import ComparableSale
from dominus.providers.names import listed_domain
from dominus.providers.sales_exports import CANONICAL, export_header, read_sales_export


@dataclass(frozen=True)
class CompsFile:
    """A sales file's sales and what it was (its format: CANONICAL, "namebio" or "report")."""

    sales: list[ComparableSale]
    format: str

    @property
    def rows(self) -> int:
        return len(self.sales)


def load_comparable_sales(path: Path) -> list[ComparableSale]:
    return read_comps_file(path).sales


def read_comps_file(path: Path) -> CompsFile:
    """Sales in file order. Currency is an upper-cased three-letter code; no conversion is done
    here (scoring decides what to do with non-USD sales)."""
    path = Path(path)
    header = export_header(path)
    if header is None:
        return CompsFile(_canonical_sales(path), CANONICAL)
    return CompsFile(list(read_sales_export(path, header)), header.format)


def _canonical_sales(path: Path) -> list[ComparableSale]:
    sales: list[ComparableSale] = []
    for line, row in read_rows(
        path, required=("domain", "price", "currency", "sale_date"), optional=("venue",)
    ):
        sales.append(
            ComparableSale(
                domain=listed_domain(path, line, "domain", row["domain"]),
                price=parse_number(path, line, "price", row["price"]),
                currency=currency_code(path, line, row["currency"]),
                sale_date=parse_date(path, line, "sale_date", row["sale_date"]),
                venue=row.get("venue", ""),
            )
        )
    return sales


def currency_code(path: Path, line: int, value: str) -> str:
    currency = value.strip().upper()
    if len(currency) != 3 or not currency.isalpha():
        raise ProviderDataError(path, f"currency {value!r} is not a three-letter code", line)
    return currency
