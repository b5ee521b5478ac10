"""`dominus valuation fit|evaluate|appraise`: the value model from sales files.

Bad input (an unreadable sales file, a bad row, a model file that is not one): one `error:`
line naming the file and line, exit 2 (the errors are DominusErrors; main.py prints them)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from dominus.cli.output import console, print_json
from dominus.domain_names import InvalidNameError, normalise_domain
from dominus.errors import InvalidInputError
from dominus.valuation.comparables import ComparablesIndex
from dominus.valuation.fitting import FitOptions, measure
from dominus.valuation.metrics import Figures, Report
from dominus.valuation.model import BUNDLED_MODEL_PATH, ValueModel, load_model
from dominus.valuation.sales import read_sales
from dominus.valuation.training import SalesSource, fit_with_holdout

app = typer.Typer(
    help="The value model: fit it on sales, measure it, appraise names.", no_args_is_help=True
)
DEFAULT_OUT = Path("valuation-model.json")


class ValuationInputError(InvalidInputError):
    """An option of a valuation command is out of range."""


@app.command("fit")
def fit(
    sales: list[Path] = typer.Argument(
        ..., help="Sales CSV files (domain,price,date,venue; NameBio's export read as is)."
    ),
    out: Path = typer.Option(DEFAULT_OUT, "--out", help="Where to write the model file."),
    holdout: float = typer.Option(
        0.2, "--holdout", help="Share of each file held out, its latest sales by date (0–0.9)."
    ),
    extra_weight: float = typer.Option(
        1.0, "--extra-weight", help="Weight of each row of the second and later files."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite --out if it exists."),
    as_json: bool = typer.Option(False, "--json", help="Print the held-out figures as JSON."),
) -> None:
    """Fit the model on the older sales, print the figures on the held-out latest ones (the
    model and both baselines, fitted on the same rows) and write the model file."""
    if not 0 <= holdout <= 0.9:
        raise ValuationInputError(f"--holdout {holdout} is not between 0 and 0.9")
    if not (math.isfinite(extra_weight) and extra_weight > 0):
        raise ValuationInputError(f"--extra-weight {extra_weight} is not a positive number")
    if out.exists() and not force:
        raise ValuationInputError(f"{out} exists: pass --force to overwrite it")
    sources = [
        SalesSource(path.name, read_sales(path), 1.0 if position == 0 else extra_weight)
        for position, path in enumerate(sales)
    ]
    try:
        result = fit_with_holdout(sources, holdout, FitOptions(holdout=holdout))
    except ValueError as error:
        raise ValuationInputError(str(error)) from None
    model = result.fitted.model
    try:
        model.save(out)
    except OSError as error:
        raise ValuationInputError(f"cannot write {out}: {error.strerror or error}") from None
    if as_json:
        print_json({"model": model.info.to_dict(), "out": str(out), "metrics": model.metrics})
        return
    console.print(f"fitted on {model.info.trained_on}; written to {out}")
    for source, reports in result.reports.items():
        console.print(f"held out of {source}: {result.held_out[source]} sales")
        print_reports(reports)


@app.command("evaluate")
def evaluate(
    sales: Path = typer.Argument(..., help="A sales CSV file to measure the model on."),
    model_path: Path | None = typer.Option(
        None, "--model", help="A model file (default: VALUATION_MODEL_PATH, else the bundled)."
    ),
    comps: Path | None = typer.Option(
        None, "--comps", help="Past sales to use as comparables (each sale sees earlier ones)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Measure the model on every sale of the file, beside the naive and the comparables-only
    baselines (fitted on the model's own training sales): overall, per price band, venue class
    and TLD group."""
    model = load_model(model_path)
    rows = read_sales(sales)
    if not rows:
        raise ValuationInputError(f"{sales}: no sales to evaluate")
    index = _index(comps, model)
    reports = measure(model, rows, index)
    if as_json:
        print_json(
            {
                "model": model.info.to_dict(),
                "file": str(sales),
                "rows": len(rows),
                "comparables": len(index) if index is not None else 0,
                "reports": {name: report.to_dict() for name, report in reports.items()},
            }
        )
        return
    console.print(f"{len(rows)} sales of {sales}; model {model.info.name} {model.info.version}")
    print_reports(reports)


@app.command("appraise")
def appraise(
    domains: list[str] = typer.Argument(None, help="Names to appraise, e.g. voice.com."),
    from_file: Path | None = typer.Option(
        None, "--from-file", help="A file of names, one a line (also a CSV's first column)."
    ),
    model_path: Path | None = typer.Option(None, "--model", help="A model file."),
    comps: Path | None = typer.Option(None, "--comps", help="Past sales as comparables."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list."),
) -> None:
    """The wholesale and retail values of each name, with their explanation."""
    names = [
        *(_domain(name) for name in domains or []),
        *(_names_in(from_file) if from_file else []),
    ]
    if not names:
        raise ValuationInputError("no names: give DOMAIN arguments or --from-file")
    model = load_model(model_path)
    appraisals = model.appraise_many(names, _index(comps, model), date.today())
    if as_json:
        print_json([appraisal.to_dict() for appraisal in appraisals])
        return
    for appraisal in appraisals:
        console.print(
            f"[bold]{appraisal.domain}[/bold]  wholesale ${appraisal.wholesale.p50:,.0f} "
            f"(${appraisal.wholesale.p10:,.0f}–${appraisal.wholesale.p90:,.0f})  retail "
            f"${appraisal.retail.p50:,.0f} (${appraisal.retail.p10:,.0f}–"
            f"${appraisal.retail.p90:,.0f})"
        )
        for item in appraisal.contributions:
            console.print(f"    {item.dollars:+14,.0f}  {item.label}", markup=False)
        for comparable in appraisal.comparables:
            console.print(
                f"    comparable {comparable.domain} ${comparable.price:,.0f} "
                f"{comparable.date} {comparable.venue} ({comparable.similarity:.2f}: "
                f"{comparable.why})",
                markup=False,
            )


def _index(comps: Path | None, model: ValueModel) -> ComparablesIndex | None:
    if comps is None:
        return None
    term = model.comparables_term
    return ComparablesIndex(read_sales(comps), half_life_years=term.half_life_years, k=term.k)


def _domain(text: str, where: str = "") -> str:
    """A name to appraise in its ASCII form (an IDN as its xn-- A-labels), by the rule every
    command uses; anything that is not a domain name is one line of bad input."""
    try:
        return normalise_domain(text).ascii
    except InvalidNameError as error:
        shown = text.encode("utf-8", "backslashreplace").decode()
        raise ValuationInputError(f"{where}{shown!r} is not a domain name ({error})") from None


def _names_in(path: Path) -> list[str]:
    """The names of a file, one a line (a CSV's first column). Blank lines are skipped, and a
    first line that has no dot is taken for a header; every other line must hold a name."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValuationInputError(
            f"{path}: not UTF-8 text (byte {error.start} cannot be read)"
        ) from None
    except OSError as error:
        raise ValuationInputError(f"{path}: cannot be read ({error.strerror or error})") from None
    names = []
    header_possible = True
    for number, line in enumerate(text.splitlines(), start=1):
        cell = line.split(",", 1)[0].strip().strip('"')
        if not cell:
            continue
        if header_possible and "." not in cell:
            header_possible = False
            continue
        header_possible = False
        names.append(_domain(cell, f"{path} line {number}: "))
    return names


def _number(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if percent else f"{value:.2f}"


def _row(name: str, figures: Figures) -> list[str]:
    return [
        name,
        str(figures.n),
        _number(figures.spearman),
        _number(figures.median_abs_log10_error),
        _number(figures.within_2x, percent=True),
        _number(figures.r2_log),
        _number(figures.bias),
        _number(figures.coverage, percent=True),
    ]


HEADERS = ("", "n", "Spearman", "med |log10 err|", "within 2×", "R² log", "bias", "P10–P90")


def print_reports(reports: dict[str, Report]) -> None:
    """Overall, then per price band, venue class and TLD group: one table each, the model and
    both baselines side by side."""
    sections: list[tuple[str, Any]] = [
        ("overall", lambda report: {"all": report.overall}),
        ("price band", lambda report: report.by_band),
        ("venue class", lambda report: report.by_venue_class),
        ("TLD group", lambda report: report.by_tld_group),
    ]
    for title, part in sections:
        table = Table(*HEADERS, title=title)
        keys: list[str] = []
        for report in reports.values():
            keys += [key for key in part(report) if key not in keys]
        for key in keys:
            for name, report in reports.items():
                figures = part(report).get(key)
                if figures is not None:
                    label = name if title == "overall" else f"{key}: {name}"
                    table.add_row(*_row(label, figures))
        console.print(table)


__all__ = ["BUNDLED_MODEL_PATH", "app"]
