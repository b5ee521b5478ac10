"""Registration and renewal prices per TLD, for the money gate.

A CSV file `tld,registration,renewal,currency` (comment lines start with `#`): the bundled,
dated `data/tld_prices.csv` unless `TLD_PRICES_PATH` names another. Loading is the only I/O of
the scoring package and happens once, at start-up; every mistake is one ConfigurationError naming
the file and line:
  - the shared strict CSV rules (providers/csvfiles.py): header, field count, quoting, UTF-8;
  - a TLD must be a top-level domain in IANA's list (bundled `data/tlds-alpha-by-domain.txt`,
    with its version line), or a multi-label suffix ("co.uk") ending in one; written with or
    without its leading dot, any case;
  - prices are finite numbers ≥ 0; one currency for the whole table;
  - a TLD listed twice is an error, not "the last row wins": prices decide money.

A TLD that is not in the table has no price; such a candidate cannot pass the money gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import as_file, files
from pathlib import Path

from dominus.errors import ConfigurationError
from dominus.providers.csvfiles import parse_number, read_rows, read_text, require
from dominus.providers.errors import ProviderDataError


def _data_dir() -> Path:
    # installed as plain files (never zipped): as_file hands back the real directory
    with as_file(files("dominus.scoring") / "data") as path:
        return Path(path)


DATA_DIR = _data_dir()
BUNDLED_PRICES_PATH = DATA_DIR / "tld_prices.csv"
IANA_TLDS_PATH = DATA_DIR / "tlds-alpha-by-domain.txt"

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


@dataclass(frozen=True)
class TldPrice:
    tld: str  # lower case, no leading dot: "com", "co.uk"
    registration: float
    renewal: float  # per year
    currency: str


@dataclass(frozen=True)
class PriceTable:
    source: str  # the file, as shown in reasons and by `dominus scoring config`
    currency: str
    prices: tuple[TldPrice, ...]
    _by_tld: dict[str, TldPrice] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_tld", {price.tld: price for price in self.prices})

    def lookup(self, suffix: str) -> TldPrice | None:
        """The price of a public suffix, looked up whole ("co.uk" is not "uk")."""
        return self._by_tld.get(suffix.lower().lstrip("."))


@dataclass(frozen=True)
class IanaTlds:
    version: str  # the file's first line, e.g. "# Version 2026111700, Last Updated …"
    tlds: frozenset[str]  # lower case


@lru_cache(maxsize=1)
def iana_tlds(path: Path = IANA_TLDS_PATH) -> IanaTlds:
    try:
        lines = read_text(path).splitlines()
    except ProviderDataError as error:
        raise ConfigurationError(f"IANA TLD list {error}") from None
    version = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("#") else "unknown"
    tlds = frozenset(
        line.strip().lower() for line in lines if line.strip() and not line.startswith("#")
    )
    return IanaTlds(version, tlds)


def load_price_table(path: Path, *, label: str | None = None) -> PriceTable:
    """The price table at `path`; `label` names it in messages (default: the path)."""
    source = label or str(path)
    known = iana_tlds()
    prices: dict[str, tuple[int, TldPrice]] = {}
    currencies: dict[str, int] = {}
    try:
        rows = read_rows(path, required=("tld", "registration", "renewal", "currency"))
        for line, row in rows:
            tld = _tld(path, line, require(path, line, "tld", row["tld"]), known)
            if tld in prices:
                first = prices[tld][0]
                raise ProviderDataError(
                    path, f"tld .{tld} is listed twice (first on line {first})", line
                )
            currency = require(path, line, "currency", row["currency"]).upper()
            currencies.setdefault(currency, line)
            if len(currencies) > 1:
                (first_currency, first_line), *_ = currencies.items()
                raise ProviderDataError(
                    path,
                    f"currency {currency} differs from {first_currency} (line {first_line}): "
                    "one table, one currency (prices are never converted)",
                    line,
                )
            price = TldPrice(
                tld=tld,
                registration=parse_number(path, line, "registration", row["registration"]),
                renewal=parse_number(path, line, "renewal", row["renewal"]),
                currency=currency,
            )
            prices[tld] = (line, price)
    except ProviderDataError as error:
        where = f"{source}, line {error.line}" if error.line is not None else source
        raise ConfigurationError(f"TLD price table {where}: {error.problem}") from None
    if not prices:
        raise ConfigurationError(f"TLD price table {source}: no prices (only a header)")
    currency = next(iter(currencies))
    return PriceTable(source, currency, tuple(price for _, price in prices.values()))


def _tld(path: Path, line: int, value: str, known: IanaTlds) -> str:
    tld = value.strip().lower().lstrip(".")
    labels = tld.split(".")
    if not all(_LABEL.match(part) for part in labels):
        raise ProviderDataError(path, f"tld {value!r} is not a domain suffix", line)
    if labels[-1] not in known.tlds:
        raise ProviderDataError(
            path,
            f"tld {value!r}: .{labels[-1]} is not a top-level domain in IANA's list "
            f"({known.version})",
            line,
        )
    return tld


@lru_cache(maxsize=1)
def bundled_price_table() -> PriceTable:
    """The bundled table, loaded once per process."""
    return load_price_table(BUNDLED_PRICES_PATH, label=f"the bundled {BUNDLED_PRICES_PATH.name}")
