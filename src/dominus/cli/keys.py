"""`dominus keys list|resume`: the rate-limit keys every process shares (ADR 0053)."""

from __future__ import annotations

from datetime import datetime

import typer
from rich.table import Table

from dominus.cli.output import console, print_model
from dominus.cli.runtime import open_runtime
from dominus.jobs.documents import RateLimitKeyOut
from dominus.jobs.rate_limit import KeyState, check_key

app = typer.Typer(help="Rate-limit keys: list, resume a paused one.", no_args_is_help=True)


@app.command("list")
def list_keys(as_json: bool = typer.Option(False, "--json")) -> None:
    """Every key configured (RATE_LIMITS) or paused: its limit, and until when it is paused."""
    runtime = open_runtime(read_only=True)
    states = runtime.limiters.list()
    if as_json:
        print_model([RateLimitKeyOut.of(state) for state in states])
        return
    table = Table("key", "limit", "paused until (local)", "paused until (UTC)", "reason")
    for state in states:
        table.add_row(
            state.key,
            "-" if state.limit is None else str(state.limit),
            _local(state.paused_until),
            _utc(state.paused_until),
            state.pause_reason or "-",
        )
    console.print(table)


@app.command("resume")
def resume(
    key: str = typer.Argument(..., help="The key, e.g. rdap:rdap.verisign.com."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """End the key's pause now, for every process."""
    check_key(key)
    runtime = open_runtime()
    state = runtime.limiters.resume(key)
    if as_json:
        print_model(RateLimitKeyOut.of(state))
        return
    waiting = state.brought_forward
    due = f"; {waiting} waiting job{'s' if waiting != 1 else ''} due now" if waiting else ""
    console.print(f"key {state.key}: resumed ({_limit(state)}){due}")


def _limit(state: KeyState) -> str:
    return "no limit" if state.limit is None else f"limit {state.limit}"


def _local(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def _utc(moment: datetime | None) -> str:
    return "-" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%SZ")
