"""Closeout lists as CSV: header `domain,age,backlinks,wayback` (the last three optional)."""

from __future__ import annotations

from pathlib import Path

from dominus.pipeline.model import CloseoutDomain
from dominus.providers.csvfiles import parse_count, parse_number, read_rows, require


def read_closeout_csv(path: Path) -> list[CloseoutDomain]:
    """Raises ProviderDataError naming the file, line and problem for any bad row."""
    entries = []
    for line, row in read_rows(
        path, required=("domain",), optional=("age", "backlinks", "wayback")
    ):
        entries.append(
            CloseoutDomain(
                domain=require(path, line, "domain", row["domain"]),
                age=parse_number(path, line, "age", row["age"]) if row.get("age") else None,
                backlinks=(
                    parse_count(path, line, "backlinks", row["backlinks"])
                    if row.get("backlinks")
                    else None
                ),
                wayback=(
                    parse_count(path, line, "wayback", row["wayback"])
                    if row.get("wayback")
                    else None
                ),
            )
        )
    return entries
