"""Printing: JSON documents to stdout, tables and messages through Rich."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from dominus.jobs.documents import dumped

# The columns that say what a row is about: kept whole at any terminal width (a cut domain or
# job type is a wrong one); every other column gives way first, folding its text, and on a
# terminal, when even folded they would be too narrow to read, the rightmost of them are left
# out (said below it). Output into a pipe or a file keeps every column: a script reads it.
KEY_COLUMNS = frozenset({"id", "domain", "type", "status", "name", "queue", "run", "sale"})
# The narrowest a folding column is worth showing (a date folds in two at this width).
MIN_READABLE = 10
# Per column: its padding (1 each side) and its right border; plus the table's left border.
COLUMN_CHROME = 3


def fitted(table: Table, width: int, *, may_leave_out: bool) -> Table:
    """`table` for `width` columns (see KEY_COLUMNS); columns are left out only when
    `may_leave_out` (a terminal)."""
    if any(column.no_wrap for column in table.columns if not _is_key(column)):
        return table  # a table that set its own widths (the candidate tables) keeps them
    for column in table.columns:
        if _is_key(column):
            column.no_wrap = True
        elif column.overflow == "ellipsis":
            column.overflow = "fold"
    left_out: list[str] = []
    while may_leave_out and _least_width(table) > width:
        minor = [index for index, column in enumerate(table.columns) if not _is_key(column)]
        if len(minor) <= 1:
            break
        left_out.insert(0, str(table.columns[minor[-1]].header))
        _drop_column(table, minor[-1])
    if left_out:
        note = f"left out at this width: {', '.join(left_out)}"
        table.caption = f"{table.caption}; {note}" if table.caption else note
    return table


def _is_key(column: Column) -> bool:
    return str(column.header) in KEY_COLUMNS


def _least_width(table: Table) -> int:
    """The width the table needs with its key columns whole and the others at MIN_READABLE
    (or their widest cell, when narrower)."""
    total = 1
    for column in table.columns:
        widest = max(
            len(Text.from_markup(str(cell)).plain)
            if isinstance(cell, str)
            else len(getattr(cell, "plain", ""))
            for cell in [column.header, *column.cells]
        )
        total += (widest if _is_key(column) else min(widest, MIN_READABLE)) + COLUMN_CHROME
    return total


def _drop_column(table: Table, index: int) -> None:
    table.columns.pop(index)
    for position, column in enumerate(table.columns):
        column._index = position


class TablesConsole(Console):
    """The CLI's console: every table it prints is `fitted` to the terminal first (one place
    for every command's tables)."""

    def print(self, *objects: Any, **options: Any) -> None:
        shown = [
            fitted(item, self.width, may_leave_out=self.is_terminal)
            if isinstance(item, Table)
            else item
            for item in objects
        ]
        super().print(*shown, **options)


console = TablesConsole(highlight=False, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def print_model(shape: BaseModel | Sequence[BaseModel]) -> None:
    """A JSON shape (a feature's `documents` model, or a list of them) as the API returns it."""
    if isinstance(shape, BaseModel):
        print_json(dumped(shape))
    else:
        print_json([dumped(item) for item in shape])


def short_time(value: datetime | None) -> str:
    if value is None:
        return "-"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def clip(text: str | None, width: int = 60) -> str:
    if not text:
        return ""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"
