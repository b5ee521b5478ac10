"""`dominus alerts ...`: the portfolio's renewal alerts."""

from __future__ import annotations

import typer
from rich.table import Table

from dominus.cli.output import console, print_model, short_time
from dominus.cli.runtime import open_runtime
from dominus.renewals.documents import AlertOut
from dominus.renewals.store import AlertStore

app = typer.Typer(help="Renewal alerts of the portfolio (RENEWAL_CHECK).", no_args_is_help=True)


@app.command("list")
def list_alerts(
    include_closed: bool = typer.Option(
        False, "--all", help="Also acknowledged, escalated and resolved alerts."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array of alerts."),
) -> None:
    """Open renewal alerts (not acknowledged), the most severe and nearest first."""
    alerts = AlertStore(open_runtime(read_only=True).engine).alerts(include_closed=include_closed)
    if as_json:
        print_model([AlertOut.of(alert) for alert in alerts])
        return
    table = Table("id", "domain", "type", "severity", "renewal", "days left", "state", "raised")
    for alert in alerts:
        table.add_row(
            str(alert.id),
            alert.domain,
            alert.type.value,
            alert.severity,
            alert.renewal_date.isoformat(),
            str(alert.days_left),
            alert.state,
            short_time(alert.created_at),
        )
    console.print(table)


@app.command("ack")
def acknowledge(
    alert_id: int = typer.Argument(..., help="The alert's id (see `dominus alerts list`)."),
    as_json: bool = typer.Option(False, "--json", help="Print the alert as JSON."),
) -> None:
    """Acknowledge an alert: it leaves the open list and stays acknowledged in later checks.
    A more severe alert of the same renewal is a new alert. An unknown id: exit 2."""
    runtime = open_runtime()
    alert = AlertStore(runtime.engine).acknowledge(alert_id, runtime.clock())
    if as_json:
        print_model(AlertOut.of(alert))
        return
    console.print(
        f"alert {alert.id} ({alert.domain}, {alert.type.value}) acknowledged at "
        f"{short_time(alert.acknowledged_at)}"
    )
