"""Candidate listings as CSV, for a spreadsheet (`runs candidates --csv --all-columns`,
`/candidates.csv?all_columns=true`; the default readable columns are run_export.py's), and the
cell rule every CSV export shares (`cell`).

The rules (ADR 0017):
- every field of the JSON documents is a column: nested objects are flattened with dotted names
  (`details.money.expected_profit`), lists are written as JSON text (`["gym", "home"]`: one rule
  for lists of words and lists of sales alike, and it reads back exactly);
- the columns are the union over the rows, in the order first seen (the first row's fields
  first); a column that holds an object in some row and nothing (`null`) in another is the
  object's own columns, empty in that row; a missing field is an empty cell;
- values: text as is, numbers as Python writes them (`1850.0`, `-21.4`), `true`/`false`, null
  as an empty cell;
- RFC 4180: a header row, fields quoted when they hold a comma, a quote or a line break, quotes
  doubled, CRLF line ends; UTF-8 with a byte order mark (spreadsheets read the file as UTF-8 only
  with it);
- the formula-injection guard: a text cell that starts with `=`, `+`, `-` or `@` (and, as OWASP
  advises, a tab or a carriage return) gets a `'` in front, so a spreadsheet shows it as text
  instead of running it. A number (int, float, Decimal; a finite one) is never guarded: it is
  written by us from a number, so it cannot carry a formula, and `'-21.4` is text a spreadsheet
  cannot sum (ADR 0051). Text that only looks like a number (`"-1"`) is still guarded: the rule
  goes by the value's type, never by how its text reads.

The columns need every row, and a large run's rows need not all be in memory: `CsvExport` takes
a function that reads the rows afresh, and reads them twice (columns, then the lines).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

BOM = "\ufeff"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
ROWS_PER_CHUNK = 200


def flatten(document: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}, "c": [1]} → {"a.b": 1, "c": [1]}; an empty object is a field of its own."""
    flat: dict[str, Any] = {}
    for key, value in document.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def columns_of(flat_rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The union of the rows' fields in the order first seen, without a field that is an
    object (so a prefix of other columns) in another row; an object's columns take the place
    where the field was first seen (null in the first row, an object in a later one)."""
    seen: dict[str, int] = {}
    for row in flat_rows:
        for name in row:
            seen.setdefault(name, len(seen))
    prefixes = {prefix for name in seen for prefix in _prefixes(name)}

    def place(name: str) -> tuple[int, int]:
        ancestors = [seen[prefix] for prefix in _prefixes(name) if prefix in seen]
        return min([seen[name], *ancestors]), seen[name]

    return sorted((name for name in seen if name not in prefixes), key=place)


def _prefixes(name: str) -> list[str]:
    """ "a.b.c" → ["a", "a.b"]."""
    return [name[:index] for index, char in enumerate(name) if char == "."]


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif _is_number(value):
        return str(value)
    elif isinstance(value, list | tuple | dict):
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    else:
        text = str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def _is_number(value: Any) -> bool:
    """A finite int, float or Decimal (not a bool): written as a plain numeric literal. `-inf`
    and `nan` stay under the guard: a spreadsheet would read `-inf` as a formula."""
    if isinstance(value, int):
        return True
    if isinstance(value, Decimal):
        return value.is_finite()
    return isinstance(value, float) and math.isfinite(value)


class CsvExport:
    """The CSV text of the rows `read_rows()` gives, in chunks (`chunks()`): the BOM and the
    header first, then a chunk every few rows. `read_rows` is called twice (the columns, then
    the lines) and must give the same rows both times; `rows` counts the rows written. With
    `columns` given, those are the header (in that order) and the rows are read once."""

    def __init__(
        self,
        read_rows: Callable[[], Iterable[Mapping[str, Any]]],
        columns: Sequence[str] | None = None,
    ) -> None:
        self._read_rows = read_rows
        self._columns = None if columns is None else list(columns)
        self.rows = 0

    def chunks(self) -> Iterator[str]:
        columns = self.columns()
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
        buffer.write(BOM)
        writer.writerow([cell(name) for name in columns])
        for row in self._read_rows():
            flat = flatten(row)
            writer.writerow([cell(flat.get(name)) for name in columns])
            self.rows += 1
            if self.rows % ROWS_PER_CHUNK == 0:
                yield _take(buffer)
        yield _take(buffer)

    def columns(self) -> list[str]:
        if self._columns is not None:
            return self._columns
        return columns_of(flatten(row) for row in self._read_rows())


def _take(buffer: io.StringIO) -> str:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text
