"""Keyword search volume and cost-per-click from a local file: DOMINUS's own CSV
(`keyword,monthly_volume,cpc`) or a Google Ads Keyword Planner download as it is saved
(`keyword_planner`; told apart by its header).

Keywords are matched case-insensitively (stored lower-cased, inner whitespace collapsed). When a
keyword is listed twice the later row wins, so an operator can append corrected figures to the
end of an exported file; each override is logged so a badly merged file does not go unnoticed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dominus.providers.csvfiles import parse_count, parse_number, read_rows, require
from dominus.providers.errors import ProviderDataError
from dominus.providers.exported_text import encoding_of
from dominus.providers.keyword_planner import planner_header, read_planner_export
from dominus.providers.models import KeywordStats

log = logging.getLogger(__name__)

DOMINUS_CSV = "csv"
KEYWORD_PLANNER = "keyword-planner"


@dataclass(frozen=True)
class KeywordFile:
    """A keyword file's figures and what it was: its format, its rows and its currency."""

    stats: dict[str, KeywordStats]
    format: str  # DOMINUS_CSV or KEYWORD_PLANNER
    rows: int
    currency: str = ""  # the export's Currency column; "" when the file does not say


def normalize_keyword(keyword: str) -> str:
    return " ".join(keyword.lower().split())


def load_keyword_data(path: Path) -> dict[str, KeywordStats]:
    return read_keyword_file(path).stats


def read_keyword_file(path: Path) -> KeywordFile:
    """The file's figures, whichever of the two formats it is in."""
    path = Path(path)
    encoding = encoding_of(path)
    header = planner_header(path, encoding)
    if header is None:
        if encoding.startswith("utf-16"):
            raise ProviderDataError(
                path,
                "not a Keyword Planner export (no header naming Keyword and Avg. monthly "
                "searches in its first lines) nor a keyword,monthly_volume,cpc CSV",
            )
        stats, rows = _collected(path, _csv_rows(path))
        return KeywordFile(stats, DOMINUS_CSV, rows)
    currencies: set[str] = set()
    stats, rows = _collected(
        path, _with_currency(read_planner_export(path, encoding, header), currencies)
    )
    if len(currencies) > 1:
        raise ProviderDataError(
            path, f"figures in several currencies ({', '.join(sorted(currencies))}): export one"
        )
    return KeywordFile(stats, KEYWORD_PLANNER, rows, next(iter(currencies), ""))


def _csv_rows(path: Path) -> Iterable[tuple[int, KeywordStats]]:
    for line, row in read_rows(path, required=("keyword", "monthly_volume", "cpc")):
        yield (
            line,
            KeywordStats(
                keyword=normalize_keyword(require(path, line, "keyword", row["keyword"])),
                monthly_volume=parse_count(path, line, "monthly_volume", row["monthly_volume"]),
                cpc=parse_number(path, line, "cpc", row["cpc"]),
            ),
        )


def _with_currency(
    rows: Iterable[tuple[int, KeywordStats, str]], currencies: set[str]
) -> Iterable[tuple[int, KeywordStats]]:
    for line, stats, currency in rows:
        if currency:
            currencies.add(currency)
        yield line, stats


def _collected(
    path: Path, rows: Iterable[tuple[int, KeywordStats]]
) -> tuple[dict[str, KeywordStats], int]:
    stats: dict[str, KeywordStats] = {}
    count = 0
    for line, row in rows:
        count += 1
        if row.keyword in stats:
            log.warning(
                "%s, line %d: keyword %r listed again; this row wins", path, line, row.keyword
            )
        stats[row.keyword] = row
    return stats, count
