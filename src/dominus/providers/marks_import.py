"""`dominus marks import`: an office's bulk file merged into the marks file the trademark gate
reads (TRADEMARK_MARKS_PATH, else IMPORTED_MARKS_PATH).

The merge, by (registry, number): a record in the file replaces the mark of the same number, a
dead one removes it; rows of the marks file without a number (kept by hand) are kept as they
are. Records are streamed into a scratch SQLite table next to the target (a later record of a
number wins, as a daily file's later transaction does), so neither file is ever held in memory.
The new marks file is written beside the old one and renamed over it only when all went well:
a bad file leaves the old one untouched.
"""

from __future__ import annotations

import csv
import os
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from dominus.providers.csvfiles import read_rows
from dominus.providers.models import Mark
from dominus.providers.settings import ProviderSettings
from dominus.providers.trademark_bulk import BulkRecord, read_bulk
from dominus.providers.trademarks import MARK_COLUMNS

# Where `dominus marks import` writes when TRADEMARK_MARKS_PATH is unset, and where the
# providers then find the marks: next to the default database, never inside the package.
IMPORTED_MARKS_PATH = Path("data") / "trademark_marks.csv"
PROGRESS_EVERY = 100_000
NO_NUMBER = "no application or serial number"
_BATCH = 5_000


@dataclass
class ImportReport:
    read: int = 0
    imported: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    replaced: int = 0  # marks of the file a record replaced
    removed: int = 0  # marks of the file a dead record removed
    total: int = 0  # marks in the file afterwards


def import_marks(
    source: Path,
    target: Path,
    format: str | None = None,
    progress: Callable[[int], None] = lambda read: None,
) -> ImportReport:
    """Merge the office file `source` into the marks file `target` (created if absent)."""
    made = not target.parent.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _merged(source, target, format, progress)
    except BaseException:
        if made:  # nothing written: not even the directory
            target.parent.rmdir()
        raise


def _merged(
    source: Path, target: Path, format: str | None, progress: Callable[[int], None]
) -> ImportReport:
    report = ImportReport()
    with (
        tempfile.TemporaryDirectory(dir=target.parent, prefix=".marks-import-") as scratch,
        closing(sqlite3.connect(Path(scratch) / "records.db")) as db,
    ):
        db.execute(
            "CREATE TABLE record (registry TEXT, number TEXT, mark TEXT, owner TEXT,"
            " classes TEXT, seq INTEGER, PRIMARY KEY (registry, number))"
        )
        _load(db, read_bulk(source, format), report, progress)
        written = Path(scratch) / "marks.csv"
        _write(db, target, written, report)
        os.replace(written, target)
    return report


def _load(
    db: sqlite3.Connection,
    records: Iterable[BulkRecord],
    report: ImportReport,
    progress: Callable[[int], None],
) -> None:
    batch: list[tuple[str, str, str | None, str, str, int]] = []
    for record in records:
        report.read += 1
        if not record.number:  # cannot be merged by its number: a malformed record
            report.skipped[NO_NUMBER] += 1
            continue
        if record.skipped is not None or record.mark is None:
            report.skipped[record.skipped or "no mark"] += 1
        else:
            report.imported += 1
        mark = record.mark
        batch.append(
            (
                record.registry,
                record.number,
                mark.mark if mark is not None else None,  # NULL: dead, removes the number
                mark.owner if mark is not None else "",
                ";".join(mark.classes) if mark is not None else "",
                report.read,
            )
        )
        if len(batch) >= _BATCH:
            _store(db, batch)
        if report.read % PROGRESS_EVERY == 0:
            progress(report.read)
    _store(db, batch)


def _store(db: sqlite3.Connection, batch: list[tuple[str, str, str | None, str, str, int]]) -> None:
    db.executemany("INSERT OR REPLACE INTO record VALUES (?, ?, ?, ?, ?, ?)", batch)
    db.commit()
    batch.clear()


def _write(db: sqlite3.Connection, target: Path, written: Path, report: ImportReport) -> None:
    with written.open("w", encoding="utf-8", newline="") as file:
        out = csv.writer(file, lineterminator="\n")
        out.writerow(MARK_COLUMNS)
        for mark in _kept_rows(db, target, report):
            out.writerow(_row(mark))
            report.total += 1
        for registry, number, text, owner, classes in db.execute(
            "SELECT registry, number, mark, owner, classes FROM record"
            " WHERE mark IS NOT NULL ORDER BY seq"
        ):
            out.writerow([text, owner, registry, classes, number])
            report.total += 1
        file.flush()
        os.fsync(file.fileno())


def _kept_rows(db: sqlite3.Connection, target: Path, report: ImportReport) -> Iterator[Mark]:
    """The target's marks that no record replaces or removes, streamed."""
    if not target.exists():
        return
    for _line, row in read_rows(target, required=("mark",), optional=MARK_COLUMNS[1:]):
        number = row.get("number", "")
        found = (
            db.execute(
                "SELECT mark IS NULL FROM record WHERE registry = ? AND number = ?",
                (row.get("registry", ""), number),
            ).fetchone()
            if number
            else None
        )
        if found is None:
            yield Mark(
                row["mark"],
                row.get("owner", ""),
                row.get("registry", ""),
                tuple(c for c in row.get("classes", "").replace(";", " ").split() if c),
                number,
            )
        elif found[0]:
            report.removed += 1
        else:
            report.replaced += 1


def _row(mark: Mark) -> list[str]:
    return [mark.mark, mark.owner, mark.registry, ";".join(mark.classes), mark.number]


def marks_path(settings: ProviderSettings) -> Path | None:
    """The marks file the real providers read: TRADEMARK_MARKS_PATH, else what `dominus marks
    import` wrote by default (when it exists); None: no marks source."""
    if settings.TRADEMARK_MARKS_PATH:
        return Path(settings.TRADEMARK_MARKS_PATH)
    return IMPORTED_MARKS_PATH if IMPORTED_MARKS_PATH.exists() else None
