"""Reading the CSV files DOMINUS loads (marks, keywords, sales, RDAP records, closeout lists).

Rules shared by every loader, so an operator's hand-edited file fails loudly and precisely, with
the file and line number, and never as a traceback or silently:

- UTF-8 (a BOM is tolerated, spreadsheets add one), decoded line by line so that a bad byte is
  reported at its line; the file is read as a stream, never whole.
- Blank lines and lines starting with `#` are skipped anywhere; the first other line is the
  header and must name every required column (and no unknown one).
- Strict CSV: a quote that is never closed is an error (the lenient reader took the rest of the
  line as one field), as is text after a closing quote. Records spanning several lines (quoted
  newlines) are not supported; these files never need them.
- No NUL character (PostgreSQL cannot store one), no field over csv's field limit (128 KiB), no
  line over MAX_LINE_BYTES.
- Any bad row raises ProviderDataError rather than being dropped.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path

from dominus.providers.errors import ProviderDataError

_BOM = "\ufeff".encode()
# No line of these files is anywhere near this; a longer one is not what it claims to be.
MAX_LINE_BYTES = 1_048_576


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ProviderDataError(path, "file not found") from None
    except UnicodeDecodeError as exc:
        raise ProviderDataError(path, f"not UTF-8 text ({exc.reason})") from exc
    except OSError as exc:
        raise ProviderDataError(path, f"cannot read ({exc.strerror or exc})") from exc


def data_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) for every line that is neither blank nor a comment."""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, line


def file_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its end) of the UTF-8 text file at `path`, read as a
    stream and decoded line by line."""
    try:
        with path.open("rb") as file:
            # Bounded reads: a file without line breaks is not read whole to find the first.
            raw_lines = iter(lambda: file.readline(MAX_LINE_BYTES + 1), b"")
            for number, raw in enumerate(raw_lines, start=1):
                if len(raw) > MAX_LINE_BYTES:
                    raise ProviderDataError(
                        path, f"line longer than {MAX_LINE_BYTES:,} bytes", number
                    )
                yield number, _decoded(path, number, raw.removeprefix(_BOM) if number == 1 else raw)
    except FileNotFoundError:
        raise ProviderDataError(path, "file not found") from None
    except OSError as exc:
        raise ProviderDataError(path, f"cannot read ({exc.strerror or exc})") from exc


def _decoded(path: Path, number: int, raw: bytes) -> str:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProviderDataError(path, f"not UTF-8 text ({exc.reason})", number) from None
    return line.removesuffix("\n").removesuffix("\r")


def csv_fields(path: Path, number: int, line: str) -> list[str]:
    """The stripped fields of one CSV line, strictly parsed."""
    if "\x00" in line:
        raise ProviderDataError(path, "contains a NUL character", number)
    try:
        fields = next(csv.reader([line], strict=True))
    except csv.Error as exc:
        raise ProviderDataError(path, csv_problem(exc, one_line_records=True), number) from None
    return [field.strip() for field in fields]


def quote_never_closed(error: csv.Error) -> bool:
    """The strict reader reached the end of the text inside a quoted field."""
    return "unexpected end of data" in str(error)


def csv_problem(error: csv.Error, *, one_line_records: bool = False) -> str:
    """The strict CSV reader's complaint in words (`one_line_records`: the file's quoted fields
    may not span lines, so an unclosed quote is found on its own line)."""
    message = str(error)
    if quote_never_closed(error):
        return "a quote is not closed" + (
            " (quoted fields cannot span lines)" if one_line_records else ""
        )
    if "field larger than field limit" in message:
        return f"a field is longer than {csv.field_size_limit():,} characters"
    if "expected after" in message:
        return "text after the closing quote of a field"
    if "new-line character" in message:
        return "a carriage return inside a line"
    return f"malformed CSV ({message})"


def read_rows(
    path: Path, required: Sequence[str], optional: Sequence[str] = ()
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: stripped value}) for each data row of the CSV file at `path`."""
    header: list[str] | None = None
    for number, line in file_lines(path):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = csv_fields(path, number, line)
        if header is None:
            header = [name.lower() for name in fields]
            missing = [name for name in required if name not in header]
            if missing:
                raise ProviderDataError(
                    path,
                    f"header must name the columns {', '.join(required)}; "
                    f"missing {', '.join(missing)} (found: {', '.join(header)})",
                    number,
                )
            unknown = [name for name in header if name not in (*required, *optional)]
            if unknown:
                # An unexpected column is usually a typo of an expected one; say so now.
                raise ProviderDataError(path, f"unknown column(s) {', '.join(unknown)}", number)
            continue
        if len(fields) != len(header):
            raise ProviderDataError(
                path, f"expected {len(header)} fields, found {len(fields)}", number
            )
        yield number, dict(zip(header, fields, strict=True))
    if header is None:
        raise ProviderDataError(path, f"no header line (expected {','.join(required)})")


def parse_number(
    path: Path, line: int, column: str, value: str, maximum: float | None = None
) -> float:
    """A finite, non-negative number (at most `maximum`), or ProviderDataError naming the
    column."""
    try:
        number = float(value)
    except ValueError:
        raise ProviderDataError(path, f"{column} {value!r} is not a number", line) from None
    if not math.isfinite(number) or number < 0:
        raise ProviderDataError(
            path, f"{column} {value!r} must be a finite, non-negative number", line
        )
    if maximum is not None and number > maximum:
        raise ProviderDataError(path, f"{column} {value!r} must be at most {maximum:,}", line)
    return number


def parse_count(path: Path, line: int, column: str, value: str) -> int:
    """A non-negative whole number ("1200" or "1200.0"; not "12.5")."""
    number = parse_number(path, line, column, value)
    if not number.is_integer():
        raise ProviderDataError(path, f"{column} {value!r} must be a whole number", line)
    return int(number)


def parse_date(path: Path, line: int, column: str, value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ProviderDataError(
            path, f"{column} {value!r} is not a date (expected YYYY-MM-DD)", line
        ) from None


def require(path: Path, line: int, column: str, value: str) -> str:
    if not value:
        raise ProviderDataError(path, f"{column} is empty", line)
    return value
