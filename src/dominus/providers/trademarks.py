"""Trademark marks from a local CSV file (`mark,owner,registry,classes[,number]`).

There is no free trademark search API to ask per name, so marks come from a file: one the
operator maintains, one `dominus marks import` writes from the USPTO's or EUIPO's bulk data
(`number` then names each mark in its registry), or the bundled sample. A missing or broken
file is reported as "source unavailable" (None) rather than as "no marks": the trademark gate
must then mark candidates unverified, never cleared.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Protocol

from dominus.providers.csvfiles import read_rows, require
from dominus.providers.errors import ProviderDataError
from dominus.providers.models import Mark

log = logging.getLogger(__name__)

_CLASS_SEPARATORS = re.compile(r"[;\s]+")
MARK_COLUMNS = ("mark", "owner", "registry", "classes", "number")


class TrademarkSource(Protocol):
    def marks(self) -> list[Mark] | None:
        """Every known mark, or None when the source is unavailable (treat as unverified)."""
        ...


def load_marks(path: Path) -> list[Mark]:
    """Marks in file order; `classes` are Nice classes separated by `;` or spaces ("9;35 42")."""
    marks: list[Mark] = []
    for line, row in read_rows(path, required=("mark",), optional=MARK_COLUMNS[1:]):
        classes = tuple(c for c in _CLASS_SEPARATORS.split(row.get("classes", "")) if c)
        marks.append(
            Mark(
                mark=require(path, line, "mark", row["mark"]),
                owner=row.get("owner", ""),
                registry=row.get("registry", ""),
                classes=classes,
                number=row.get("number", ""),
            )
        )
    return marks


class MarksFileSource:
    """Reads the marks file on every call, so edits take effect without a restart (it is small)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def marks(self) -> list[Mark] | None:
        try:
            return load_marks(self.path)
        except ProviderDataError as exc:
            log.warning("trademark source unavailable: %s", exc.message)
            return None
