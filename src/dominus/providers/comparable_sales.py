"""Comparable domain sales from a local CSV file (`domain,price,currency,sale_date,venue`)."""

from __future__ import annotations

from pathlib import Path

from dominus.providers.csvfiles import parse_date, parse_number, read_rows
from dominus.providers.errors import ProviderDataError
from dominus.providers.models import ComparableSale
from dominus.providers.names import listed_domain


def load_comparable_sales(path: Path) -> list[ComparableSale]:
    """Sales in file order. Currency is an upper-cased three-letter code; no conversion is done
    here (scoring decides what to do with non-USD sales)."""
    sales: list[ComparableSale] = []
    for line, row in read_rows(
        path, required=("domain", "price", "currency", "sale_date"), optional=("venue",)
    ):
        currency = row["currency"].upper()
        if len(currency) != 3 or not currency.isalpha():
            raise ProviderDataError(
                path, f"currency {row['currency']!r} is not a three-letter code", line
            )
        sales.append(
            ComparableSale(
                domain=listed_domain(path, line, "domain", row["domain"]),
                price=parse_number(path, line, "price", row["price"]),
                currency=currency,
                sale_date=parse_date(path, line, "sale_date", row["sale_date"]),
                venue=row.get("venue", ""),
            )
        )
    return sales
