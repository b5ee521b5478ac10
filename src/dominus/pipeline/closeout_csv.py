"""Closeout and auction lists as CSV: header `domain,age,backlinks,wayback,price` (all but
`domain` optional). `price` is the listing's asking price in the scoring currency: finite,
≥ 0 and at most MAX_LISTED_PRICE."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from dominus.pipeline.model import MAX_INPUT_NAMES, MAX_LISTED_PRICE, CloseoutDomain
from dominus.providers.csvfiles import parse_count, parse_number, read_rows, require
from dominus.providers.errors import ProviderDataError

OPTIONAL_COLUMNS = ("age", "backlinks", "wayback", "price")


def read_closeout_csv(path: Path, max_rows: int = MAX_INPUT_NAMES) -> list[CloseoutDomain]:
    """Raises ProviderDataError naming the file, line and problem for any bad row, and for a
    file with more rows than a run takes (it stops reading there)."""
    entries: list[CloseoutDomain] = []
    for line, row in read_rows(path, required=("domain",), optional=OPTIONAL_COLUMNS):
        if len(entries) == max_rows:
            raise ProviderDataError(
                path, f"more than {max_rows:,} domains, the most a run takes", line
            )
        entries.append(_closeout(path, line, row))
    return entries


def _closeout(path: Path, line: int, row: dict[str, str]) -> CloseoutDomain:
    try:
        return CloseoutDomain(
            domain=require(path, line, "domain", row["domain"]),
            age=parse_number(path, line, "age", row["age"]) if row.get("age") else None,
            backlinks=(
                parse_count(path, line, "backlinks", row["backlinks"])
                if row.get("backlinks")
                else None
            ),
            wayback=(
                parse_count(path, line, "wayback", row["wayback"]) if row.get("wayback") else None
            ),
            price=(
                parse_number(path, line, "price", row["price"], maximum=MAX_LISTED_PRICE)
                if row.get("price")
                else None
            ),
        )
    except ValidationError as error:  # out of the model's range: too long, too old, too many
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc'])}: {issue['msg']}"
            for issue in error.errors()
        )
        raise ProviderDataError(path, problems, line) from None
