"""Sales exports read as they are saved: a NameBio export, or a marketplace's sold report.

NameBio's export has the columns `domain,price_usd,date,venue` (prices in US dollars as NameBio
reports them, ISO dates, the venue the sale was reported from). A sold report from a marketplace
(Sedo, Afternic, Dan, ...) is read when its columns go by the names below; other columns (fees,
buyer, ...) are left alone. Prices may carry a currency sign or code and thousands separators
("$1,250", "1.250,00" is NOT read: a comma is only ever a thousands separator); a report without a
currency column must say its currency in the price column's name (`Price (USD)`) or on every
price ("$", "USD 120"), never assumed. Dates are ISO (`2024-09-17`, a time after it ignored).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from dominus.providers.errors import ProviderDataError
from dominus.providers.exported_text import delimiter_of, encoding_of, split_fields, text_lines
from dominus.providers.models import ComparableSale
from dominus.providers.names import listed_domain

CANONICAL = "csv"
NAMEBIO = "namebio"
REPORT = "report"

CANONICAL_COLUMNS = ("domain", "price", "currency", "sale_date", "venue")
NAMES: dict[str, tuple[str, ...]] = {
    "domain": ("domain", "domain name", "domain_name", "name"),
    "price": (
        "price_usd",
        "price (usd)",
        "price usd",
        "price",
        "sale price",
        "sold price",
        "sales price",
        "amount",
    ),
    "currency": ("currency",),
    "date": ("date", "sale_date", "sale date", "sold date", "date sold", "sold on"),
    "venue": ("venue", "marketplace", "platform", "source"),
}
# Price columns whose name says the currency.
USD_PRICE_COLUMNS = {"price_usd", "price (usd)", "price usd"}

_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP"}
_PRICE = re.compile(
    r"^(?P<pre>[A-Za-z]{3}|[$€£])?\s*(?P<number>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<fraction>\d+))?"
    r"\s*(?P<post>[A-Za-z]{3})?$"
)


@dataclass(frozen=True)
class ExportHeader:
    line: int
    encoding: str
    delimiter: str
    format: str  # NAMEBIO or REPORT
    columns: dict[str, int]  # field → its column's position
    width: int
    currency: str  # from the price column's name; "" when each row must say


def export_header(path: Path) -> ExportHeader | None:
    """The header of an export; None when the file is DOMINUS's own CSV (or has no header,
    which the CSV reader then reports)."""
    encoding = encoding_of(path)
    for number, line in text_lines(path, encoding):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        delimiter = delimiter_of(line)
        names = [name.lower() for name in split_fields(path, number, line, delimiter)]
        if set(names) <= set(CANONICAL_COLUMNS) and encoding.startswith("utf-8"):
            return None
        return _export_header(path, number, encoding, delimiter, names)
    return None


def _export_header(
    path: Path, number: int, encoding: str, delimiter: str, names: list[str]
) -> ExportHeader:
    columns: dict[str, int] = {}
    for field, accepted in NAMES.items():
        position = next((names.index(name) for name in accepted if name in names), None)
        if position is not None:
            columns[field] = position
    missing = [field for field in ("domain", "price", "date") if field not in columns]
    if missing:
        raise ProviderDataError(
            path,
            f"not a sales file DOMINUS reads: no {' nor '.join(missing)} column (found: "
            f"{', '.join(names)}); see docs/data-sources.md",
            number,
        )
    price_name = names[columns["price"]]
    namebio = price_name == "price_usd" and names[columns["date"]] == "date"
    return ExportHeader(
        line=number,
        encoding=encoding,
        delimiter=delimiter,
        format=NAMEBIO if namebio else REPORT,
        columns=columns,
        width=len(names),
        currency="USD" if price_name in USD_PRICE_COLUMNS else "",
    )


def read_sales_export(path: Path, header: ExportHeader) -> Iterator[ComparableSale]:
    for number, line in text_lines(path, header.encoding):
        if number <= header.line or not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = split_fields(path, number, line, header.delimiter)
        if len(fields) != header.width:
            raise ProviderDataError(
                path, f"expected {header.width} fields, found {len(fields)}", number
            )
        row = {field: fields[position] for field, position in header.columns.items()}

        price, currency = export_price(path, number, row.get("price", ""))
        yield ComparableSale(
            domain=listed_domain(path, number, "domain", row.get("domain", "")),
            price=price,
            currency=_currency(path, number, header, currency, row.get("currency", "")),
            sale_date=export_date(path, number, row.get("date", "")),
            venue=row.get("venue", ""),
        )


def export_price(path: Path, line: int, value: str) -> tuple[float, str]:
    """(the amount, the currency its text names or "")."""
    match = _PRICE.match(value.strip())
    if match is None:
        raise ProviderDataError(path, f"price {value!r} is not an amount", line)
    fraction = match.group("fraction")
    amount = float(match.group("number").replace(",", "") + (f".{fraction}" if fraction else ""))
    mark = match.group("pre") or match.group("post") or ""
    return amount, _SIGNS.get(mark, mark.upper())


def _currency(path: Path, line: int, header: ExportHeader, named: str, column: str) -> str:
    said = {code for code in (named, column.strip().upper(), header.currency) if code}
    if len(said) > 1:
        raise ProviderDataError(
            path, f"the price's currency is unclear ({', '.join(sorted(said))})", line
        )
    if not said:
        raise ProviderDataError(
            path,
            "no currency: add a currency column, or name it in the price column "
            "(price_usd) or on the price ($120)",
            line,
        )
    currency = said.pop()
    if len(currency) != 3 or not currency.isalpha():
        raise ProviderDataError(path, f"currency {currency!r} is not a three-letter code", line)
    return currency


def export_date(path: Path, line: int, value: str) -> date:
    text = value.strip()
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        raise ProviderDataError(
            path, f"date {value!r} is not a date (expected YYYY-MM-DD)", line
        ) from None
