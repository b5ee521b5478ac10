"""`dominus marks import FILE`: the USPTO's or EUIPO's bulk trademark file merged into the marks
file the trademark gate reads. Bad input: one `error:` line, exit 2, the marks file untouched."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from dominus.cli.output import console
from dominus.cli.runtime import configure_logging
from dominus.config import load_settings
from dominus.errors import InvalidInputError
from dominus.providers.marks_import import IMPORTED_MARKS_PATH, ImportReport, import_marks
from dominus.providers.trademark_bulk import FORMATS

app = typer.Typer(help="Trademark marks for the trademark gate.", no_args_is_help=True)


class MarksInputError(InvalidInputError):
    """An option of `dominus marks import` is not one it takes."""


@app.command("import")
def import_command(
    source: Path = typer.Argument(
        ..., help="A USPTO trademark XML file (daily or annual, .zip or .xml) or an EUIPO one."
    ),
    format: str | None = typer.Option(
        None, "--format", help=f"{' or '.join(FORMATS)} [told by the file's root element]."
    ),
    to: Path | None = typer.Option(
        None,
        "--to",
        help=f"The marks file to merge into [TRADEMARK_MARKS_PATH, else ./{IMPORTED_MARKS_PATH}].",
    ),
) -> None:
    """Read the office's file as a stream and merge its live word marks into the marks file:
    a mark of the same number is replaced, a dead one removed; rows without a number (your own)
    stay. Counts what was read, imported and skipped, and why."""
    settings = load_settings()
    configure_logging(settings.DOMINUS_LOG_LEVEL)
    if format is not None and format not in FORMATS:
        raise MarksInputError(f"--format {format!r} is not one of {', '.join(FORMATS)}")
    target = to or Path(settings.TRADEMARK_MARKS_PATH or IMPORTED_MARKS_PATH)
    report = import_marks(source, target, format, progress=_progress)
    _print(report, target)
    if to is not None and str(to) != settings.TRADEMARK_MARKS_PATH:
        console.print(f"set TRADEMARK_MARKS_PATH={to} for the trademark gate to use it")


def _progress(read: int) -> None:
    sys.stderr.write(f"read {read:,} records...\n")
    sys.stderr.flush()


def _print(report: ImportReport, target: Path) -> None:
    skipped = sum(report.skipped.values())
    console.print(
        f"read {report.read:,} records: imported {report.imported:,}, skipped {skipped:,}",
        markup=False,
    )
    for reason, count in report.skipped.most_common():
        console.print(f"  skipped {count:,}: {reason}", markup=False)
    console.print(
        f"wrote {target}: {report.total:,} marks ({report.replaced:,} replaced, "
        f"{report.removed:,} removed as dead)",
        markup=False,
    )
