"""What renewing a name costs, and which price that figure is (ADR 0046).

The bundled `data/registrar_prices.csv` holds, per registrar and TLD, the registration, renewal
and transfer prices read from a dated source (columns `registrar,tld,registration,renewal,
transfer,currency,observed_on,date_basis,source,note`). A price not found is an empty cell, never
an estimate. Loading is strict, like the at-cost table (prices.py): one ConfigurationError naming
the file and line for a bad row, a registrar × TLD listed twice, a row without a source or date,
or a price that is not a positive number (a transfer may be 0: some registries charge nothing).

`renewal_price` picks the figure for one name, in this order, and says which it used:
  1. the owner's own renewal cost, when set;
  2. its registrar's renewal for the TLD, when the registrar is known (names matched with
     `canonical_registrar`: "GoDaddy.com, LLC" is GoDaddy) and the table has that price;
  3. the highest sourced retail renewal for the TLD among the table's registrars (a cost plans
     on the dearest known invoice, not the cheapest), never below the registry at-cost price;
  4. the registry at-cost table (prices.py) when no registrar price is known;
  5. nothing: the renewal cost is unknown.
Prices are never converted: a table in another currency than the scoring one is not used.

`REGISTRAR_PRICES_PATH` names the owner's own table in the same format (say, the prices on their
registrar's invoices or price page): its rows replace the bundled ones for the same registrar and
TLD, and it may name registrars the bundled table does not know ("Spaceship"), matched by name
with the same folding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Literal

from dominus.errors import ConfigurationError
from dominus.providers.csvfiles import parse_date, parse_number, read_rows, require
from dominus.providers.errors import ProviderDataError
from dominus.scoring.prices import DATA_DIR, PriceTable

REGISTRAR_PRICES_PATH = DATA_DIR / "registrar_prices.csv"

# Each registrar's canonical name and the spellings registrars' exports, WHOIS and people use.
# A name is compared after `_folded` (lower case, company suffixes and punctuation dropped).
REGISTRAR_ALIASES: dict[str, tuple[str, ...]] = {
    "GoDaddy": ("godaddy", "go daddy", "godaddy.com", "godaddy operating company"),
    "Namecheap": ("namecheap",),
    "Dynadot": ("dynadot",),
    "Porkbun": ("porkbun",),
    "Cloudflare": ("cloudflare", "cloudflare registrar"),
    "Sav": ("sav", "sav.com"),
}

_SUFFIXES = re.compile(r"\b(inc|llc|l\.l\.c|ltd|limited|corp|corporation|co|gmbh)\b\.?")
_NOT_WORD = re.compile(r"[^a-z0-9.]+")

Basis = Literal["published", "read"]
Kind = Literal["own", "registrar", "highest_retail", "at_cost", "unknown"]


def _folded(name: str) -> str:
    text = _SUFFIXES.sub(" ", name.lower().replace(",", " "))
    return " ".join(_NOT_WORD.sub(" ", text).split()).strip(" .")


_BY_ALIAS = {
    _folded(alias): canonical
    for canonical, aliases in REGISTRAR_ALIASES.items()
    for alias in (*aliases, canonical)
}


def canonical_registrar(name: str | None) -> str | None:
    """The table's name for a registrar as written anywhere ("NameCheap, Inc." → "Namecheap");
    None for a registrar the table does not know."""
    return _named_in(_BY_ALIAS, name)


def _named_in(names: dict[str, str], name: str | None) -> str | None:
    """The name `names` gives to `name` written any way: folded, then without its spaces."""
    if name is None or not name.strip():
        return None
    folded = _folded(name)
    return names.get(folded) or names.get(folded.replace(" ", ""))


@dataclass(frozen=True)
class RegistrarPrice:
    registrar: str  # canonical
    tld: str  # lower case, no leading dot
    registration: float | None
    renewal: float | None
    transfer: float | None
    currency: str
    observed_on: date
    date_basis: Basis  # published: the source's date; read: the day its stored copy was read
    source: str  # the page or file the figures were read from
    note: str

    def observed_words(self) -> str:
        if self.date_basis == "published":
            return f"observed {self.observed_on.isoformat()}"
        return f"read {self.observed_on.isoformat()} from an undated source"


@dataclass(frozen=True)
class RegistrarPriceTable:
    source: str
    currency: str
    rows: tuple[RegistrarPrice, ...]
    _by_key: dict[tuple[str, str], RegistrarPrice] = field(
        init=False, repr=False, compare=False, hash=False
    )
    # Every registrar of the rows by its folded name, with and without spaces: an owner's table
    # may name registrars `canonical_registrar` does not know.
    _by_name: dict[str, str] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {(row.registrar, row.tld): row for row in self.rows})
        names = {row.registrar for row in self.rows}
        by_name = {_folded(name): name for name in names}
        by_name |= {key.replace(" ", ""): name for key, name in by_name.items()}
        object.__setattr__(self, "_by_name", by_name)

    def lookup(self, registrar: str | None, tld: str) -> RegistrarPrice | None:
        """The registrar's row for the TLD (registrar in any spelling `canonical_registrar`
        knows, or as an owner's table names it); None when either is unknown."""
        canonical = canonical_registrar(registrar) or _named_in(self._by_name, registrar)
        if canonical is None:
            return None
        return self._by_key.get((canonical, _tld_key(tld)))

    def over(self, base: RegistrarPriceTable) -> RegistrarPriceTable:
        """This table's rows, and `base`'s for the registrar × TLD pairs this one lacks; this
        table alone when the two are in different currencies (prices are never converted)."""
        if base.currency != self.currency:
            return self
        kept = tuple(row for row in base.rows if (row.registrar, row.tld) not in self._by_key)
        return RegistrarPriceTable(
            f"{self.source} over {base.source}", self.currency, (*self.rows, *kept)
        )

    def highest_renewal(self, tld: str) -> RegistrarPrice | None:
        """The row with the highest sourced renewal for the TLD (ties: the first registrar
        alphabetically, so the answer does not depend on row order)."""
        key = _tld_key(tld)
        priced = [row for row in self.rows if row.tld == key and row.renewal is not None]
        return max(priced, key=lambda row: (row.renewal, _reverse(row.registrar)), default=None)


def _reverse(text: str) -> tuple[int, ...]:
    return tuple(-ord(character) for character in text)


def _tld_key(tld: str) -> str:
    return tld.strip().lower().lstrip(".")


@dataclass(frozen=True)
class RenewalPrice:
    """The yearly renewal figure used for a name, and which price it is."""

    amount: float | None  # None: unknown
    kind: Kind
    source: str  # in full, e.g. "Porkbun renewal .com $11.08 (read 2026-12-04 …, <url>)"
    label: str  # short, for tables and reasons: "Porkbun .com renewal"


@dataclass(frozen=True)
class RenewalPricing:
    """The tables `renewal_price` consults, in one currency."""

    registrars: RegistrarPriceTable
    at_cost: PriceTable
    currency: str

    def price(self, tld: str, *, renewal_cost: float | None, registrar: str | None) -> RenewalPrice:
        return renewal_price(
            tld,
            renewal_cost=renewal_cost,
            registrar=registrar,
            registrars=self.registrars if self.registrars.currency == self.currency else None,
            at_cost=self.at_cost if self.at_cost.currency == self.currency else None,
        )


def renewal_price(
    tld: str,
    *,
    renewal_cost: float | None,
    registrar: str | None,
    registrars: RegistrarPriceTable | None,
    at_cost: PriceTable | None,
) -> RenewalPrice:
    """The renewal figure for a name under `tld`, by the order in the module's docstring."""
    key = _tld_key(tld)
    if renewal_cost is not None:
        return RenewalPrice(renewal_cost, "own", "your renewal cost", "your renewal cost")
    if registrars is not None:
        own = registrars.lookup(registrar, key)
        if own is not None and own.renewal is not None:
            return RenewalPrice(
                own.renewal, "registrar", _words(own), f"{own.registrar} .{key} renewal"
            )
    floor = None if at_cost is None else at_cost.lookup(key)
    dearest = None if registrars is None else registrars.highest_renewal(key)
    retail = None if dearest is None else dearest.renewal
    if dearest is not None and retail is not None and (floor is None or retail >= floor.renewal):
        return RenewalPrice(
            retail,
            "highest_retail",
            f"highest known retail price: {_words(dearest)}",
            f"highest known .{key} renewal ({dearest.registrar})",
        )
    if floor is not None:
        return RenewalPrice(
            floor.renewal,
            "at_cost",
            f"registry at-cost .{key} ${floor.renewal:,.2f} ({at_cost.source if at_cost else ''})",
            f"registry at-cost .{key} price",
        )
    unknown = f"no renewal price known for .{key}"
    return RenewalPrice(None, "unknown", unknown, unknown)


def _words(row: RegistrarPrice) -> str:
    assert row.renewal is not None
    return (
        f"{row.registrar} renewal .{row.tld} ${row.renewal:,.2f} "
        f"({row.observed_words()}, {row.source})"
    )


COLUMNS = ("registrar", "tld", "registration", "renewal", "transfer", "currency")
DATED = ("observed_on", "date_basis", "source", "note")


def load_registrar_prices(
    path: Path, *, label: str | None = None, any_registrar: bool = False
) -> RegistrarPriceTable:
    """The registrar price table at `path`; `label` names it in messages (default: the path).
    `any_registrar`: an owner's table may name registrars beyond the known ones."""
    source = label or str(path)
    rows: dict[tuple[str, str], tuple[int, RegistrarPrice]] = {}
    try:
        for line, row in read_rows(path, required=(*COLUMNS, *DATED)):
            price = _row(path, line, row, any_registrar=any_registrar)
            key = (price.registrar, price.tld)
            if key in rows:
                raise ProviderDataError(
                    path, f"{price.registrar} .{price.tld} is listed twice "
                    f"(first on line {rows[key][0]})", line,
                )  # fmt: skip
            rows[key] = (line, price)
    except ProviderDataError as error:
        where = f"{source}, line {error.line}" if error.line is not None else source
        raise ConfigurationError(f"registrar price table {where}: {error.problem}") from None
    currencies = {price.currency for _, price in rows.values()}
    if len(currencies) != 1:
        found = ", ".join(sorted(currencies)) or "none"
        raise ConfigurationError(
            f"registrar price table {source}: one currency expected, found {found}"
        )
    return RegistrarPriceTable(source, currencies.pop(), tuple(p for _, p in rows.values()))


def _row(path: Path, line: int, row: dict[str, str], *, any_registrar: bool) -> RegistrarPrice:
    name = require(path, line, "registrar", row["registrar"])
    registrar = canonical_registrar(name) or (" ".join(name.split()) if any_registrar else None)
    if registrar is None:
        known = ", ".join(REGISTRAR_ALIASES)
        raise ProviderDataError(path, f"registrar {name!r} is not one of {known}", line)
    basis = require(path, line, "date_basis", row["date_basis"])
    if basis not in ("published", "read"):
        raise ProviderDataError(path, f"date_basis {basis!r} is not published or read", line)
    price = RegistrarPrice(
        registrar=registrar,
        tld=_tld_key(require(path, line, "tld", row["tld"])),
        registration=_price(path, line, "registration", row["registration"]),
        renewal=_price(path, line, "renewal", row["renewal"]),
        transfer=_price(path, line, "transfer", row["transfer"], free_allowed=True),
        currency=require(path, line, "currency", row["currency"]).upper(),
        observed_on=parse_date(path, line, "observed_on", row["observed_on"]),
        date_basis="published" if basis == "published" else "read",
        source=require(path, line, "source", row["source"]),
        note=row["note"],
    )
    if price.registration is None and price.renewal is None and price.transfer is None:
        raise ProviderDataError(path, "a row without any price", line)
    return price


def _price(
    path: Path, line: int, column: str, value: str, *, free_allowed: bool = False
) -> float | None:
    if not value:
        return None
    number = parse_number(path, line, column, value)
    if number == 0 and not free_allowed:
        raise ProviderDataError(path, f"{column} 0 is not a price (leave it empty)", line)
    return number


@lru_cache(maxsize=1)
def bundled_registrar_prices() -> RegistrarPriceTable:
    """The bundled table, loaded once per process."""
    return load_registrar_prices(
        REGISTRAR_PRICES_PATH, label=f"the bundled {REGISTRAR_PRICES_PATH.name}"
    )


def owner_registrar_prices(path: Path) -> RegistrarPriceTable:
    """`REGISTRAR_PRICES_PATH`'s table over the bundled one (see the module's docstring)."""
    own = load_registrar_prices(path, label=f"REGISTRAR_PRICES_PATH {path}", any_registrar=True)
    return own.over(bundled_registrar_prices())
