"""What an import would do, row by row, before anything is written: the dry run of
`dominus portfolio import --dry-run --skip-invalid` (every invalid row listed, not only the
first few), with each valid row's line, the values read from it and what would happen to it, and
the column each field was read from. The dashboard shows it before its Confirm button."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from dominus.portfolio.csv_import import ImportOptions, ImportReport, PortfolioImporter

Action = Literal["add", "update", "unchanged", "skip"]


@dataclass(frozen=True)
class PreviewRow:
    line: int
    domain: str
    action: Action
    values: dict[str, Any]  # field → value as read (dates, amounts, text); blank cells left out
    changes: tuple[str, ...] = ()  # the fields an update would change
    reason: str | None = None  # why a row is skipped


@dataclass(frozen=True)
class ImportPreview:
    report: ImportReport
    rows: list[PreviewRow]

    @property
    def columns(self) -> dict[str, str]:
        return self.report.columns

    @property
    def writes(self) -> int:
        """Rows the import would add or change."""
        return len(self.report.added) + len(self.report.updated)


def preview_import(
    importer: PortfolioImporter, text: str, options: ImportOptions, now: datetime
) -> ImportPreview:
    """The dry run (nothing written, invalid rows listed rather than refused as a whole) and
    the rows behind it. Errors of the file as a whole (no domain column, not CSV, an unknown
    preset) are raised as the import raises them."""
    dry = replace(options, dry_run=True, skip_invalid=True)
    report = importer.run(text, dry, now)
    rows, _ = importer.read(text, dry)
    added = set(report.added)
    updated = {item["domain"]: tuple(item["changes"]) for item in report.updated}
    unchanged = set(report.unchanged)
    skipped = {item["domain"]: str(item["reason"]) for item in report.skipped}
    preview: list[PreviewRow] = []
    for row in rows:
        values = {"domain": row.domain, **row.values.given()}
        action: Action = "add"
        if row.domain in updated:
            action = "update"
        elif row.domain in unchanged:
            action = "unchanged"
        elif row.domain in skipped:
            action = "skip"
        elif row.domain not in added:
            continue  # refused while planning (a new name without a renewal date)
        preview.append(
            PreviewRow(
                row.line,
                row.domain,
                action,
                values,
                updated.get(row.domain, ()),
                skipped.get(row.domain),
            )
        )
    return ImportPreview(report, preview)
