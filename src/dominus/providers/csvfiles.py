"""Reading the small CSV data files providers load (marks, keywords, sales, RDAP records).

Rules shared by every loader, so an operator's hand-edited file fails loudly and precisely:
UTF-8 (a BOM is tolerated, spreadsheets add one), blank lines and lines starting with `#` are
skipped anywhere, the first other line is the header and must name every required column, and
any bad row raises ProviderDataError with the file and line number rather than being dropped.
Records spanning several lines (quoted newlines) are not supported; these files never need them.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path

from dominus.providers.errors import ProviderDataError


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


def read_rows(
    path: Path, required: Sequence[str], optional: Sequence[str] = ()
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, {column: stripped value}) for each data row of the CSV file at `path`."""
    header: list[str] | None = None
    for number, line in data_lines(read_text(path)):
        fields = [field.strip() for field in next(csv.reader([line]))]
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


def parse_number(path: Path, line: int, column: str, value: str) -> float:
    """A finite, non-negative number, or ProviderDataError naming the column."""
    try:
        number = float(value)
    except ValueError:
        raise ProviderDataError(path, f"{column} {value!r} is not a number", line) from None
    if not math.isfinite(number) or number < 0:
        raise ProviderDataError(
            path, f"{column} {value!r} must be a finite, non-negative number", line
        )
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
