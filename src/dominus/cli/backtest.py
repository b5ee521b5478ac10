"""`dominus backtest build|report|suggest-weights|calibrate|demo`."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import typer

from dominus.backtest.demo import run_demo
from dominus.backtest.model import OutcomeInputError
from dominus.backtest.report import ReportOptions
from dominus.backtest.service import (
    DEFAULT_MIN_SAMPLE_SIZE,
    MAX_MIN_SAMPLE_SIZE,
    BacktestService,
)
from dominus.cli.backtest_output import print_calibration, print_report, print_tune
from dominus.cli.output import console, print_json
from dominus.cli.runtime import Runtime, open_runtime

app = typer.Typer(
    help="Backtest the engine on recorded sales; suggest and tune weights; calibrate.",
    no_args_is_help=True,
)
DEFAULT_PLOT = Path("backtest-report.png")


def service_of(runtime: Runtime) -> BacktestService:
    return BacktestService(runtime.settings, runtime.engine, runtime.clock, runtime.queue())


@app.command("build")
def build(
    min_sample_size: int = typer.Option(
        DEFAULT_MIN_SAMPLE_SIZE, "--min-sample-size", min=1, max=MAX_MIN_SAMPLE_SIZE
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """What BACKTEST_BUILD does, in this process: snapshot, report, suggestion."""
    result = service_of(open_runtime()).build(min_sample_size)
    if as_json:
        print_json(result)
        return
    skipped = ", ".join(f"{name} {count}" for name, count in result["skipped"].items())
    console.print(
        f"snapshot: {result['signals_built']} sales joined to a score before the sale, "
        f"{result['new_signals']} new; skipped: {skipped}"
    )


@app.command("report")
def report(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    plot: Path = typer.Option(DEFAULT_PLOT, "--plot", help="Where to write the PNG plot."),
    no_plot: bool = typer.Option(False, "--no-plot", help="Write no plot."),
    force: bool = typer.Option(
        False, "--force", help="Overwrite a --plot file that is not an earlier plot."
    ),
    folds: int = typer.Option(3, "--folds", min=1, max=50, help="Walk-forward folds."),
    split: str | None = typer.Option(
        None, "--split-date", help="One walk-forward cut instead: train before YYYY-MM-DD."
    ),
) -> None:
    """The report of the snapshot (build it first: `backtest build`, or BACKTEST_BUILD)."""
    cut = _date("--split-date", split) if split else None
    if not no_plot:
        _check_plot_path(plot, force)
    runtime = open_runtime(read_only=True)
    service = BacktestService(runtime.settings, runtime.engine, runtime.clock)
    document = service.report(ReportOptions(folds=folds, split=cut))
    if not no_plot:
        plot.write_bytes(service.plot())
        document["plot"] = str(plot)
    if as_json:
        print_json(document)
        return
    print_report(document)
    if not no_plot:
        console.print(f"plot written to {plot}")


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _check_plot_path(plot: Path, force: bool) -> None:
    """An earlier plot is replaced (each report rewrites its own); any other file only with
    --force, so that a mistyped path never costs the file it names."""
    if plot.is_dir() or not plot.parent.exists():
        raise OutcomeInputError(f"--plot {plot}: not a file in an existing directory")
    if force or not plot.exists():
        return
    try:
        with plot.open("rb") as handle:
            earlier_plot = handle.read(len(PNG_SIGNATURE)) == PNG_SIGNATURE
    except OSError as error:
        raise OutcomeInputError(f"--plot {plot}: cannot be read ({error.strerror})") from None
    if not earlier_plot:
        raise OutcomeInputError(
            f"--plot {plot}: exists and is not a plot: pass --force to overwrite it"
        )


@app.command("suggest-weights")
def suggest_weights(
    apply: bool = typer.Option(
        False,
        "--apply",
        help="Write the suggestion as the active weight set if every check passes.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the tune as JSON."),
) -> None:
    """Suggest weights from the snapshot and run the safety checks; recorded as a tune. Without
    --apply nothing changes (a dry run)."""
    result = service_of(open_runtime()).tune(dry_run=not apply, origin="cli").to_dict()
    if as_json:
        print_json(result)
    else:
        print_tune(result)


@app.command("calibrate")
def calibrate(
    target_precision: float = typer.Option(
        0.8,
        "--target-precision",
        min=0.01,
        max=1.0,
        help="Share of recommendations to sell at or above their buy max.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print every candidate setting as JSON."),
    apply: bool = typer.Option(
        False, "--apply", help="Write the setting found as the active threshold set."
    ),
) -> None:
    """Find score and confidence thresholds and the sell-through rate that reach the target
    precision on the snapshot; print them. --apply writes them (a new threshold version)."""
    service = service_of(open_runtime())
    result = service.calibrate(target_precision)
    if apply:
        result["applied_version"] = service.apply_calibration(result)
    if as_json:
        print_json(result)
        return
    print_calibration(result)
    if apply:
        console.print(f"applied as threshold set {result['applied_version']}")


@app.command("demo")
def demo() -> None:
    """Load the bundled SAMPLE outcomes (invented sales), score their names offline as of the
    day before the first sale, and build the snapshot; then try `backtest report`."""
    outcome = run_demo(service_of(open_runtime()))
    if outcome.imported:
        console.print(
            f"imported {outcome.imported} SAMPLE outcomes (invented sales); scored their names "
            f"in run {outcome.run_id} with the offline SAMPLE data"
        )
    else:
        console.print("the SAMPLE outcomes were already loaded; snapshot rebuilt")
    build = outcome.build
    console.print(
        f"snapshot: {build['signals_built']} sales joined to a score before the sale "
        f"({build['new_signals']} new)"
    )
    console.print("next: dominus backtest report; dominus backtest suggest-weights")


def _date(option: str, text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise OutcomeInputError(f"{option} {text!r}: give a date as YYYY-MM-DD") from None
