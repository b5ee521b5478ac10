"""A Google Ads Keyword Planner download ("Keyword Stats …csv"), read as it is saved.

What such a file looks like (see docs/data-sources.md for the sources): UTF-16 with a byte-order
mark, tab-separated, a title line ("Keyword Stats 2026-06-09 at 21_25_18") and a date-range line
before the header, then one keyword a row. Of its columns DOMINUS reads:

- `Keyword`: the phrase, matched as the CSV format's keyword is (lower-cased, spaces collapsed);
- `Avg. monthly searches`: a whole number ("1,900" or "1900"), or, in accounts Google shows
  bucketed figures to, a range such as "1K – 10K": the LOW end is taken (1,000), so a bucket
  never counts for more than Google vouches for; an empty cell is 0 searches;
- `Top of page bid (low range)`: the CPC, the lower of the two bids for the same reason; empty
  is no CPC (0);
- `Currency`: checked to be one code for the whole file (the figures are not converted).

Every other column (competition, the monthly `Searches: …` series, shares…) is left alone. The
encoding and delimiter are detected, so the same file re-saved as UTF-8 or with commas reads too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dominus.providers.errors import ProviderDataError
from dominus.providers.exported_text import delimiter_of, split_fields, text_lines
from dominus.providers.models import KeywordStats

log = logging.getLogger(__name__)

KEYWORD = "keyword"
VOLUME = "avg. monthly searches"
BID_LOW = "top of page bid (low range)"
CURRENCY = "currency"
# Lines before the header: Google writes two (title, date range); a few more are tolerated, so a
# file with a note added on top still reads, but a file that is not an export is refused soon.
MAX_TITLE_LINES = 5

_SUFFIXES = {"": 1, "k": 1_000, "m": 1_000_000, "b": 1_000_000_000}
_AMOUNT = re.compile(r"^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*([kKmMbB]?)$")
_RANGE = re.compile(r"^\s*(\S+)\s*[-–—]\s*(\S+)\s*$")
_EMPTY = {"", "-", "–", "—", "--"}


@dataclass(frozen=True)
class PlannerHeader:
    line: int
    delimiter: str
    columns: list[str]  # lower-cased


def planner_header(path: Path, encoding: str) -> PlannerHeader | None:
    """The export's header line, when one of the first lines is it; None: not an export."""
    seen = 0
    for number, line in text_lines(path, encoding):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        delimiter = delimiter_of(line)
        try:
            columns = [name.lower() for name in split_fields(path, number, line, delimiter)]
        except ProviderDataError:
            columns = []  # a title line need not be valid CSV; the header must
        if KEYWORD in columns and VOLUME in columns:
            return PlannerHeader(number, delimiter, columns)
        seen += 1
        if seen > MAX_TITLE_LINES:
            return None
    return None


def read_planner_export(
    path: Path, encoding: str, header: PlannerHeader
) -> Iterator[tuple[int, KeywordStats, str]]:
    """(line, the keyword's figures, its currency or "") for each keyword row."""
    for number, fields in _rows(path, encoding, header):
        row = dict(zip(header.columns, fields, strict=False))
        keyword = " ".join(row.get(KEYWORD, "").lower().split())
        if not keyword:
            raise ProviderDataError(path, "Keyword is empty", number)
        yield (
            number,
            KeywordStats(
                keyword=keyword,
                monthly_volume=planner_volume(path, number, row.get(VOLUME, "")),
                cpc=planner_amount(path, number, "Top of page bid (low range)", row.get(BID_LOW)),
            ),
            row.get(CURRENCY, "").upper(),
        )


def _rows(path: Path, encoding: str, header: PlannerHeader) -> Iterator[tuple[int, list[str]]]:
    width = len(header.columns)
    for number, line in text_lines(path, encoding):
        if number <= header.line or not line.strip():
            continue
        fields = split_fields(path, number, line, header.delimiter)
        if len(fields) > width:
            raise ProviderDataError(
                path, f"expected at most {width} fields, found {len(fields)}", number
            )
        yield number, fields


def planner_volume(path: Path, line: int, value: str) -> int:
    """A whole number of searches; of a range ("1K – 10K"), its low end."""
    text = value.strip()
    if text in _EMPTY:
        return 0
    bounds = _RANGE.match(text)
    low = bounds.group(1) if bounds else text
    number = _amount(low)
    if number is None or (bounds and _amount(bounds.group(2)) is None):
        raise ProviderDataError(
            path, f"Avg. monthly searches {value!r} is not a number nor a range", line
        )
    return int(number)


def planner_amount(path: Path, line: int, column: str, value: str | None) -> float:
    """A bid ("1.25", "1,250.00"); empty is 0 (Google shows no bid)."""
    text = (value or "").strip()
    if text in _EMPTY:
        return 0.0
    number = _amount(text)
    if number is None:
        raise ProviderDataError(path, f"{column} {value!r} is not an amount", line)
    return number


def _amount(text: str) -> float | None:
    match = _AMOUNT.match(text.strip())
    if match is None:
        return None
    whole, fraction, suffix = match.groups()
    number = float(whole.replace(",", "") + (f".{fraction}" if fraction else ""))
    return number * _SUFFIXES[suffix.lower()]
