"""`dominus weights show|history|rollback VERSION` and the same for calibrated thresholds."""

from __future__ import annotations

import typer
from rich.table import Table

from dominus.backtest.documents import ThresholdsOut, VersionedSetOut
from dominus.backtest.service import BacktestService
from dominus.cli.output import console, print_model, short_time
from dominus.cli.runtime import open_runtime
from dominus.pipeline.scoring_sets import THRESHOLD_FIELDS, VersionedSets
from dominus.scoring.config import ScoringConfig

weights_app = typer.Typer(
    help="The signal weight sets: active, history, rollback.", no_args_is_help=True
)
thresholds_app = typer.Typer(
    help="Calibrated threshold sets: active, history, rollback.", no_args_is_help=True
)
VERSION = typer.Argument(..., min=1, help="The version to activate again (see history).")
JSON = typer.Option(False, "--json", help="Print JSON.")


def _service(read_only: bool) -> BacktestService:
    runtime = open_runtime(read_only=read_only)
    return BacktestService(runtime.settings, runtime.engine, runtime.clock)


def _history(sets: VersionedSets, as_json: bool) -> None:
    active = sets.active()
    rows = sets.history()
    if as_json:
        print_model([VersionedSetOut.of(row, active.id if active else None) for row in rows])
        return
    table = Table("version", "name", "source", "values", "activated", "notes")
    for row in rows:
        marker = " (active)" if active and row.id == active.id else ""
        values = ", ".join(f"{key} {value:g}" for key, value in row.values.items()) or "-"
        table.add_row(
            f"{row.id}{marker}",
            row.name,
            row.source,
            values,
            short_time(row.activated_at),
            row.notes or "",
        )
    console.print(table)


@weights_app.command("show")
def weights_show(as_json: bool = JSON) -> None:
    """The weights scoring uses now (shares of 1) and where they come from."""
    in_force = _service(True).weights_in_force()
    if as_json:
        print_model(in_force)
        return
    active = in_force.active
    source = (
        "the built-in defaults"
        if active is None
        else (f"weight set {active.version} ({active.name}, {active.source})")
    )
    console.print(f"active: {source}")
    for name, value in in_force.weights.items():
        console.print(f"  {name:<10} {value:.4f}  (default {in_force.defaults[name]:.2f})")


@weights_app.command("history")
def weights_history(as_json: bool = JSON) -> None:
    """Every weight set, newest first."""
    _history(_service(True).store.weights, as_json)


@weights_app.command("rollback")
def weights_rollback(version: int = VERSION) -> None:
    """Activate a copy of an earlier weight set (a new version; scoring uses it from its next
    job)."""
    service = _service(False)
    new = service.store.weights.rollback(version, service.clock())
    console.print(f"weight set {new} (a copy of version {version}) is now active")


@thresholds_app.command("show")
def thresholds_show(as_json: bool = JSON) -> None:
    """The decision thresholds scoring uses now: the active calibrated set over SCORING_*."""
    service = _service(True)
    active = service.store.thresholds.active()
    config = service.config()
    values = {name: getattr(config, name) for name in THRESHOLD_FIELDS}
    defaults = {name: getattr(ScoringConfig(), name) for name in THRESHOLD_FIELDS}
    if as_json:
        print_model(ThresholdsOut.of(active, values, defaults))
        return
    console.print(
        "active: the SCORING_* settings"
        if active is None or not active.values
        else f"active: threshold set {active.id} ({active.name}) over the SCORING_* settings"
    )
    for name, value in values.items():
        console.print(f"  SCORING_{name.upper():<28} {value:g}  (default {defaults[name]:g})")


@thresholds_app.command("history")
def thresholds_history(as_json: bool = JSON) -> None:
    """Every threshold set, newest first."""
    _history(_service(True).store.thresholds, as_json)


@thresholds_app.command("rollback")
def thresholds_rollback(version: int = VERSION) -> None:
    """Activate a copy of an earlier threshold set (a new version)."""
    service = _service(False)
    new = service.store.thresholds.rollback(version, service.clock())
    console.print(f"threshold set {new} (a copy of version {version}) is now active")
