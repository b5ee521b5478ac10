"""Keyword search volume and cost-per-click from a local CSV file (`keyword,monthly_volume,cpc`).

Keywords are matched case-insensitively (stored lower-cased, inner whitespace collapsed). When a
keyword is listed twice the later row wins, so an operator can append corrected figures to the
end of an exported file; each override is logged so a badly merged file does not go unnoticed.
"""

from __future__ import annotations

import logging
from pathlib import Path

from dominus.providers.csvfiles import parse_count, parse_number, read_rows, require
from dominus.providers.models import KeywordStats

log = logging.getLogger(__name__)


def normalize_keyword(keyword: str) -> str:
    return " ".join(keyword.lower().split())


def load_keyword_data(path: Path) -> dict[str, KeywordStats]:
    stats: dict[str, KeywordStats] = {}
    for line, row in read_rows(path, required=("keyword", "monthly_volume", "cpc")):
        keyword = normalize_keyword(require(path, line, "keyword", row["keyword"]))
        if keyword in stats:
            log.warning("%s, line %d: keyword %r listed again; this row wins", path, line, keyword)
        stats[keyword] = KeywordStats(
            keyword=keyword,
            monthly_volume=parse_count(path, line, "monthly_volume", row["monthly_volume"]),
            cpc=parse_number(path, line, "cpc", row["cpc"]),
        )
    return stats
