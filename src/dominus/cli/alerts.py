"""`dominus alerts ...`: the portfolio's renewal alerts."""

from __future__ import annotations

from datetime import datetime

import typer
from rich.table import Table

from dominus.cli.output import console, print_model, short_time
from dominus.cli.runtime import open_runtime
from dominus.errors import InvalidInputError
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
    alert_id: int | None = typer.Argument(None, help="The alert's id (see `dominus alerts list`)."),
    every_open: bool = typer.Option(
        False, "--all", help="Acknowledge every open alert instead of one."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the alert (with --all: the list acknowledged) as JSON."
    ),
) -> None:
    """Acknowledge an alert, or with --all every open one: it leaves the open list and stays
    acknowledged in later checks. A more severe alert of the same renewal is a new alert. An
    unknown id, or neither or both of an id and --all: exit 2."""
    if (alert_id is None) == (not every_open):
        raise InvalidInputError(
            "give an alert id or --all, not both"
            if every_open
            else "give an alert id, or --all for every open alert"
        )
    runtime = open_runtime()
    store = AlertStore(runtime.engine)
    if alert_id is None:
        _acknowledge_all(store, runtime.clock(), as_json=as_json)
        return
    alert = store.acknowledge(alert_id, runtime.clock())
    if as_json:
        print_model(AlertOut.of(alert))
        return
    console.print(
        f"alert {alert.id} ({alert.domain}, {alert.type.value}) acknowledged at "
        f"{short_time(alert.acknowledged_at)}"
    )


def _acknowledge_all(store: AlertStore, now: datetime, *, as_json: bool) -> None:
    alerts = store.acknowledge_all(now)
    if as_json:
        print_model([AlertOut.of(alert) for alert in alerts])
        return
    count = len(alerts)
    console.print(f"{count} open alert{'' if count == 1 else 's'} acknowledged")
    for alert in alerts:
        console.print(f"  {alert.id} {alert.domain} {alert.type.value}")
