"""Importing a portfolio from a registrar's or marketplace's CSV export.

Columns are found by an explicit `--map field=column`, then the preset's columns, then the
header aliases (presets.py). Every row is checked before anything is written, against the same
bounds as a value given to the API or `portfolio add` (entry_model.py: lengths, no NUL, amounts);
an invalid row is reported with its line and column. By default one invalid row means nothing is
written (the import is one transaction); `skip_invalid` writes the valid rows. A blank cell never
overwrites a stored value, so re-importing the same file changes nothing. A new name needs a
renewal date; its renewal cost, when the file has none, is left unset and looked up when used
(ADR 0046). A cell our own export guarded against formula injection (`'=…`) is read back
without the `'`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from dominus.db.errors import database_errors
from dominus.portfolio.model import (
    EntryFields,
    PortfolioEntry,
    PortfolioInputError,
    acquisition_problem,
    utc_today,
)
from dominus.portfolio.presets import (
    ALIASES,
    AMOUNT_FIELDS,
    DATE_FIELDS,
    FIELDS,
    PRESETS,
    RENEWAL_DATE_FALLBACK,
    Preset,
    normalise_header,
    preset_names,
)
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import read_entries
from dominus.portfolio.values import (
    DateOrder,
    check_registrar_status,
    date_order,
    parse_amount,
    parse_date,
    parse_domain,
    parse_flag,
)
from dominus.providers.csvfiles import quote_never_closed

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
MAX_SHOWN_ERRORS = 3


@dataclass(frozen=True)
class ImportOptions:
    preset: str | None = None
    mapping: Mapping[str, str] = field(default_factory=dict)  # field → column header
    date_format: str | None = None
    decimal_comma: bool = False
    dry_run: bool = False
    skip_invalid: bool = False


@dataclass(frozen=True)
class RowProblem:
    line: int
    column: str | None
    error: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", column {self.column!r}" if self.column else "")
        return f"{where}: {self.error}"


@dataclass
class ImportReport:
    dry_run: bool
    added: list[str] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    refused: list[RowProblem] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    # field → the header of the column that fed it; the headers no field read.
    columns: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)


class ImportRefusedError(PortfolioInputError):
    """Invalid rows and no --skip-invalid: nothing was written."""

    def __init__(self, report: ImportReport) -> None:
        problems = report.refused
        shown = "; ".join(str(problem) for problem in problems[:MAX_SHOWN_ERRORS])
        more = len(problems) - MAX_SHOWN_ERRORS
        extra = f" (and {more} more)" if more > 0 else ""
        super().__init__(
            f"{len(problems)} invalid row(s), nothing imported: {shown}{extra}; fix them or "
            "pass --skip-invalid to import the valid rows (--dry-run --skip-invalid lists all)",
            code="invalid_import",
        )
        self.report = report


@dataclass(frozen=True)
class _Row:
    line: int
    domain: str
    values: EntryFields
    renewal_column: str | None
    acquired_column: str | None = None


def parse_mapping(text: str) -> dict[str, str]:
    """`domain=Name,renewal_date=Expires` → {"domain": "Name", "renewal_date": "Expires"}."""
    mapping: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, column = part.partition("=")
        key = key.strip()
        if not sep or not column.strip():
            raise PortfolioInputError(f"--map {part.strip()!r}: write field=column")
        if key not in FIELDS:
            raise PortfolioInputError(f"--map {key!r}: unknown field (fields: {', '.join(FIELDS)})")
        mapping[key] = column.strip()
    return mapping


def preset_of(name: str | None) -> Preset | None:
    if name is None:
        return None
    key = normalise_header(name)
    if key not in PRESETS:
        raise PortfolioInputError(f"unknown preset {name!r} (presets: {preset_names()})")
    return PRESETS[key]


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise PortfolioInputError(
            f"the file is not UTF-8 text (byte {error.start}): export it as UTF-8 CSV"
        ) from None


class PortfolioImporter:
    def __init__(self, service: PortfolioService) -> None:
        self.service = service

    def run(self, text: str, options: ImportOptions, now: datetime) -> ImportReport:
        rows, report = self.read(text, options)
        rows = _acquired_by_today(rows, report, utc_today(now))
        with database_errors(), self.service.engine.begin() as connection:
            existing = {entry.domain: entry for entry in read_entries(connection, status=None)}
            plan = self._plan(rows, existing, report)
            if report.refused and not options.skip_invalid:
                raise ImportRefusedError(report)
            for row in plan:
                entry = existing.get(row.domain)
                if entry is None:
                    report.added.append(row.domain)
                    if not options.dry_run:
                        self.service.insert_entry(connection, row.domain, row.values, now)
                    continue
                changes = self.service.changes(entry, row.values)
                if not changes:
                    report.unchanged.append(row.domain)
                    continue
                report.updated.append({"domain": row.domain, "changes": sorted(changes)})
                if not options.dry_run:
                    self.service.change_entry(connection, entry, row.values, now)
            if options.dry_run:
                connection.rollback()
                return report
            touched = report.added + [item["domain"] for item in report.updated]
            if touched:
                self.service.refresh_verdicts_in(connection, now, touched)
        return report

    def read(self, text: str, options: ImportOptions) -> tuple[list[_Row], ImportReport]:
        """The file's valid rows, and a report holding the invalid and skipped ones."""
        preset = preset_of(options.preset)
        if options.date_format is not None:
            _check_date_format(options.date_format)
        lines = text.splitlines()
        if not any(line.strip() for line in lines):
            raise PortfolioInputError("the file is empty: a header row is needed")
        delimiter = (preset.delimiter if preset else None) or _sniff(lines)
        # Strict: a quote never closed is refused, not every later row read as one cell
        # Universal newlines: a file whose lines end in a bare CR (old Mac, some Excel
        # exports) reads as any other
        reader = csv.reader(io.StringIO(text, newline=None), delimiter=delimiter, strict=True)
        try:
            header = next(row for row in reader if any(cell.strip() for cell in row))
        except csv.Error as error:
            raise PortfolioInputError(f"line {reader.line_num}: {error}") from None
        columns = _columns(header, preset, options.mapping)
        skip = _skip_rule(header, preset)
        report = ImportReport(
            dry_run=options.dry_run,
            columns={name: text for name, (_, text) in columns.items()},
            ignored=_ignored(header, columns, skip),
        )
        records = _records(reader, report)
        orders = _date_orders(records, columns, options, preset)
        rows = self._rows(records, columns, preset, options, report, skip, orders)
        return rows, report

    @staticmethod
    def _plan(
        rows: Sequence[_Row], existing: Mapping[str, PortfolioEntry], report: ImportReport
    ) -> list[_Row]:
        """The rows to write; a new name without a renewal date is refused, a closed one
        skipped."""
        plan = []
        for row in rows:
            entry = existing.get(row.domain)
            if entry is None and row.values.renewal_date is None:
                problem = f"{row.domain} is not in the portfolio yet and has no renewal date"
                report.refused.append(RowProblem(row.line, row.renewal_column, problem))
            elif entry is not None and entry.status != "active":
                report.skipped.append(
                    {"line": row.line, "domain": row.domain, "reason": f"already {entry.status}"}
                )
            else:
                plan.append(row)
        report.refused.sort(key=lambda problem: problem.line)
        return plan

    def _rows(
        self,
        records: Sequence[tuple[int, list[str]]],
        columns: dict[str, tuple[int, str]],
        preset: Preset | None,
        options: ImportOptions,
        report: ImportReport,
        skip: tuple[int, frozenset[str], str] | None,
        orders: Mapping[str, DateOrder],
    ) -> list[_Row]:
        date_format = options.date_format or (preset.date_format if preset else None)
        zero_is_blank = preset is not None and preset.zero_is_blank
        domain_index = columns["domain"][0]
        rows: list[_Row] = []
        first_line: dict[str, int] = {}
        for line, cells in records:
            if skip is not None:
                index, values, reason = skip
                if index < len(cells) and cells[index].strip().lower() in values:
                    domain = cells[domain_index].strip() if domain_index < len(cells) else ""
                    report.skipped.append({"line": line, "domain": domain, "reason": reason})
                    continue
            row = self._row(
                cells, line, columns, preset, _Reading(date_format, orders), options, zero_is_blank
            )
            if isinstance(row, RowProblem):
                report.refused.append(row)
                continue
            if row.domain in first_line:
                report.refused.append(
                    RowProblem(
                        line,
                        columns["domain"][1],
                        f"{row.domain} appears again (first on line {first_line[row.domain]})",
                    )
                )
                continue
            first_line[row.domain] = line
            rows.append(row)
        return rows

    def _row(
        self,
        cells: Sequence[str],
        line: int,
        columns: dict[str, tuple[int, str]],
        preset: Preset | None,
        reading: _Reading,
        options: ImportOptions,
        zero_is_blank: bool,
    ) -> _Row | RowProblem:
        values: dict[str, Any] = {}
        for name, (index, column) in columns.items():
            raw = _unguard(cells[index].strip()) if index < len(cells) else ""
            if not raw:
                if name == "domain":
                    return RowProblem(line, column, "no domain")
                continue
            try:
                value = self._value(name, raw, reading, options.decimal_comma)
            except ValueError as error:
                return RowProblem(line, column, str(error))
            if name in AMOUNT_FIELDS and zero_is_blank and value == 0:
                continue  # this export writes 0 for "not set"
            values[name] = value
        currency = values.pop("currency", None)
        if currency is not None and currency != self.service.currency:
            return RowProblem(
                line,
                columns["currency"][1],
                f"amounts in {currency}, but the portfolio keeps {self.service.currency} "
                "(amounts are never converted)",
            )
        domain = values.pop("domain")
        if "registrar" not in values and preset is not None and preset.registrar is not None:
            values["registrar"] = preset.registrar
        fields = EntryFields(**values)
        # The bounds every other way in applies (length, NUL, amounts): a row the API would
        # refuse is refused here, with its line and column, before anything is written.
        problems = fields.problems()
        if problems:
            field_name, problem = problems[0]
            found = columns.get(field_name)
            return RowProblem(line, found[1] if found else field_name, problem)
        renewal = columns.get("renewal_date")
        acquired = columns.get("acquired_at")
        return _Row(
            line, domain, fields, renewal[1] if renewal else None, acquired[1] if acquired else None
        )

    @staticmethod
    def _value(name: str, raw: str, reading: _Reading, decimal_comma: bool) -> Any:
        if name in DATE_FIELDS:
            return parse_date(raw, reading.date_format, reading.orders.get(name))
        if name in AMOUNT_FIELDS:
            return parse_amount(raw, decimal_comma=decimal_comma)
        parse = _TEXT_PARSERS.get(name)
        return raw if parse is None else parse(raw)


@dataclass(frozen=True)
class _Reading:
    """How a row's dates are read: the format given (or the preset's), else each date
    column's order as the whole file proves it."""

    date_format: str | None
    orders: Mapping[str, DateOrder]


def _domain(raw: str) -> str:
    """The row's domain; a `www.` host name is refused, not imported as a domain of its own
    nor silently cut down (ADR 0045): the owner says which name is meant."""
    name = parse_domain(raw)[0]
    head, _, rest = name.partition(".")
    if head == "www" and "." in rest:
        raise ValueError(
            f"{raw.strip()!r} is a host name (www.), not a domain: write {rest} if that is "
            "the name held"
        )
    return name


def _acquired_by_today(rows: list[_Row], report: ImportReport, today: date) -> list[_Row]:
    """The rows whose acquisition is not after today; the others refused with their line."""
    kept = []
    for row in rows:
        problem = acquisition_problem(row.values, today)
        if problem is None:
            kept.append(row)
        else:
            report.refused.append(RowProblem(row.line, row.acquired_column, problem))
    return kept


def _records(reader: Any, report: ImportReport) -> list[tuple[int, list[str]]]:
    """Every non-blank row after the header with its line; a row the CSV reader cannot read is
    refused with its line."""
    records: list[tuple[int, list[str]]] = []
    while True:
        starts = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return records
        except csv.Error as error:
            if quote_never_closed(error):
                # Not one bad row: nothing after the quote can be read, so nothing is imported
                raise PortfolioInputError(
                    f"line {starts}: a quote opened here is never closed (every line after it "
                    "would be read as one cell)"
                ) from None
            report.refused.append(RowProblem(reader.line_num, None, str(error)))
            continue
        if any(cell.strip() for cell in cells):
            records.append((reader.line_num, cells))


def _date_orders(
    records: Sequence[tuple[int, list[str]]],
    columns: Mapping[str, tuple[int, str]],
    options: ImportOptions,
    preset: Preset | None,
) -> dict[str, DateOrder]:
    """Each date column's order (day-first or month-first) as ALL its cells prove it: one
    `1/14/2027` makes `12/9/2026` in the same column December 9th. A column whose cells prove
    both orders is refused whole (one line asking for --date-format); a column that proves
    neither keeps its ambiguous cells refused, row by row, as before. Not needed when a date
    format is given or the preset has one."""
    if options.date_format is not None or (preset is not None and preset.date_format):
        return {}
    orders: dict[str, DateOrder] = {}
    for name in DATE_FIELDS:
        if name not in columns:
            continue
        index, header = columns[name]
        seen: dict[DateOrder, tuple[int, str]] = {}
        for line, cells in records:
            cell = cells[index].strip() if index < len(cells) else ""
            order = date_order(cell)
            if order is not None:
                seen.setdefault(order, (line, cell))
        if len(seen) == 2:
            (day_line, day_cell), (month_line, month_cell) = (
                seen["day_first"],
                seen["month_first"],
            )
            raise PortfolioInputError(
                f"column {header!r} holds day-first (line {day_line}: {day_cell!r}) and "
                f"month-first (line {month_line}: {month_cell!r}) dates: give --date-format, "
                "e.g. %d/%m/%Y or %m/%d/%Y"
            )
        if seen:
            orders[name] = next(iter(seen))
    return orders


def _ignored(
    header: Sequence[str],
    columns: Mapping[str, tuple[int, str]],
    skip: tuple[int, frozenset[str], str] | None,
) -> list[str]:
    """The headers no field reads (a repeated header named with its column number)."""
    used = {index for index, _ in columns.values()}
    if skip is not None:
        used.add(skip[0])
    repeated = {text for text in header if header.count(text) > 1}
    return [
        f"{text} (column {index + 1})" if text in repeated else text
        for index, text in enumerate(header)
        if index not in used and text.strip()
    ]


def _currency(raw: str) -> str:
    code = raw.upper()
    if len(code) != 3 or not code.isalpha():
        raise ValueError(f"{raw!r} is not a 3-letter currency code")
    return code


# The fields read from text by a parser of their own (the others are kept as written).
_TEXT_PARSERS: dict[str, Callable[[str], Any]] = {
    "domain": _domain,
    "auto_renew": parse_flag,
    "registrar_status": check_registrar_status,
    "currency": _currency,
}


def _unguard(text: str) -> str:
    if text.startswith("'") and text[1:].startswith(FORMULA_STARTS):
        return text[1:]
    return text


def _sniff(lines: Sequence[str]) -> str:
    header = next(line for line in lines if line.strip())
    return ";" if header.count(";") > header.count(",") else ","


def _check_date_format(date_format: str) -> None:
    if "%" not in date_format:
        raise PortfolioInputError(
            f"--date-format {date_format!r}: write it with strptime codes, e.g. %d/%m/%Y"
        )


def _columns(
    header: Sequence[str], preset: Preset | None, mapping: Mapping[str, str]
) -> dict[str, tuple[int, str]]:
    """field → (index, header text) of its column; the first of duplicate headers wins."""
    by_key: dict[str, int] = {}
    for index, text in enumerate(header):
        by_key.setdefault(normalise_header(text), index)
    found: dict[str, tuple[int, str]] = {}
    for name, column in mapping.items():
        mapped = by_key.get(normalise_header(column))
        if mapped is None:
            raise PortfolioInputError(
                f"line 1: column {column!r} (mapped to {name}) is not in the header "
                f"({', '.join(repr(text) for text in header)})"
            )
        found[name] = (mapped, header[mapped])
    if preset is not None:
        for name, column in preset.columns.items():
            listed = by_key.get(normalise_header(column))
            if name not in found and listed is not None:
                found[name] = (listed, header[listed])
    for name, aliases in ALIASES.items():
        if name in found:
            continue
        alias = next((i for key, i in by_key.items() if key in aliases), None)
        if alias is not None and alias not in {i for i, _ in found.values()}:
            found[name] = (alias, header[alias])
    if "renewal_date" not in found:
        fallback = next((i for key, i in by_key.items() if key in RENEWAL_DATE_FALLBACK), None)
        if fallback is not None:
            found["renewal_date"] = (fallback, header[fallback])
    if "domain" not in found:
        raise PortfolioInputError(
            "line 1: no domain column in the header "
            f"({', '.join(repr(text) for text in header)}): give --map domain=COLUMN"
        )
    return found


def _skip_rule(
    header: Sequence[str], preset: Preset | None
) -> tuple[int, frozenset[str], str] | None:
    """(column index, values, reason) of the preset's rows to skip, when its column is there."""
    if preset is None or preset.skip_when is None:
        return None
    column, values, reason = preset.skip_when
    keys = [normalise_header(text) for text in header]
    key = normalise_header(column)
    return (keys.index(key), values, reason) if key in keys else None
