"""`dominus outcomes add|import|list`: what names finally did (sold, dropped, expired)."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import ValidationError
from rich.table import Table

from dominus.backtest.demo import SAMPLE_OUTCOMES
from dominus.backtest.documents import OutcomeOut, RecordedOutcomeOut
from dominus.backtest.model import OutcomeInputError, RecordedOutcomes
from dominus.backtest.outcomes import OutcomeIn, describe
from dominus.backtest.service import BacktestService
from dominus.cli.output import console, print_model
from dominus.cli.runtime import Runtime, open_runtime
from dominus.scoring.decision import amount

app = typer.Typer(
    help="Outcomes: sales, drops and expiries, for the backtest.", no_args_is_help=True
)


def service_of(runtime: Runtime) -> BacktestService:
    return BacktestService(runtime.settings, runtime.engine, runtime.clock, runtime.queue())


def _built(recorded: RecordedOutcomes) -> str:
    if recorded.build_job_id is None:
        return ""
    if recorded.build_created:
        return f"; BACKTEST_BUILD job {recorded.build_job_id} enqueued"
    return f"; BACKTEST_BUILD job {recorded.build_job_id} already pending"


@app.command("add")
def add(
    domain: str = typer.Argument(..., help="The name, e.g. cloudnest.com."),
    outcome_type: str = typer.Option("sold", "--type", help="sold, dropped or expired."),
    price: float | None = typer.Option(None, "--price", help="The sale price (sales only)."),
    currency: str | None = typer.Option(
        None, "--currency", help="3-letter code [default: SCORING_CURRENCY]."
    ),
    date: str = typer.Option(..., "--date", help="YYYY-MM-DD, not after today."),
    venue: str | None = typer.Option(None, "--venue", help="Where it sold (Sedo, Afternic...)."),
    fees: float | None = typer.Option(None, "--fees", help="Commission and fees paid."),
    notes: str | None = typer.Option(None, "--notes"),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
) -> None:
    """Record one outcome. A sale with a price enqueues BACKTEST_BUILD (one while pending)."""
    try:
        entry = OutcomeIn.model_validate(
            {
                "domain": domain,
                "type": outcome_type,
                "price": price,
                "currency": currency,
                "date": date,
                "venue": venue,
                "fees": fees,
                "notes": notes,
            }
        )
    except ValidationError as error:
        raise OutcomeInputError(describe(error)) from None
    recorded = service_of(open_runtime()).record([entry])
    outcome = recorded.outcomes[0]
    if as_json:
        print_model(RecordedOutcomeOut.recorded(outcome, recorded.build_job_id))
        return
    what: str = outcome.type
    if outcome.sale_price is not None:
        what += f" for {amount(outcome.sale_price, outcome.currency or '')}"
    console.print(
        f"outcome {outcome.id} recorded: {outcome.domain} {what} on {outcome.date}"
        + _built(recorded)
    )


@app.command("import")
def import_csv(
    path: Path | None = typer.Argument(
        None, help="CSV: domain,date[,type,price,currency,venue,fees,notes].", dir_okay=False
    ),
    sample: bool = typer.Option(
        False, "--sample", help="The bundled SAMPLE outcomes (240 invented sales)."
    ),
) -> None:
    """Import outcomes from a CSV file, all or none (the first bad row is the error)."""
    if (path is None) == (not sample):
        raise OutcomeInputError("give a CSV file or --sample (one of them)")
    service = service_of(open_runtime())
    entries = service.read_csv(path or SAMPLE_OUTCOMES)
    if not entries:
        raise OutcomeInputError(f"{path or SAMPLE_OUTCOMES}: no outcomes in the file")
    recorded = service.record(entries)
    console.print(f"imported {len(recorded.outcomes)} outcomes" + _built(recorded))


@app.command("list")
def list_outcomes(
    outcome_type: str | None = typer.Option(None, "--type", help="sold, dropped or expired."),
    limit: int = typer.Option(100, "--limit", min=1, max=100_000),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
) -> None:
    """Outcomes, newest first."""
    if outcome_type not in (None, "sold", "dropped", "expired"):
        raise OutcomeInputError(f"--type {outcome_type!r}: give sold, dropped or expired")
    runtime = open_runtime(read_only=True)
    found = BacktestService(runtime.settings, runtime.engine, runtime.clock).store.list_outcomes(
        outcome_type=outcome_type, limit=limit
    )
    if as_json:
        print_model([OutcomeOut.of(outcome) for outcome in found])
        return
    table = Table("id", "date", "domain", "type", "price", "venue", "notes")
    for outcome in found:
        price = (
            "-"
            if outcome.sale_price is None
            else amount(outcome.sale_price, outcome.currency or "")
        )
        table.add_row(
            str(outcome.id),
            outcome.date.isoformat(),
            outcome.domain,
            outcome.type,
            price,
            outcome.venue or "",
            outcome.notes or "",
        )
    console.print(table)
