"""`dominus watchlist ...`: watched domains, and a poll by hand."""

from __future__ import annotations

import threading

import typer
from rich.table import Table

from dominus.cli.gate_waits import printed_waits
from dominus.cli.output import clip, console, print_json, print_model, short_time
from dominus.cli.runtime import open_runtime
from dominus.watchlist.documents import WatchEntryOut
from dominus.watchlist.drops import DropPhase
from dominus.watchlist.model import WatchEntry, watched_domain
from dominus.watchlist.service import poll_watchlist
from dominus.watchlist.store import WatchlistStore, checked_notes

app = typer.Typer(help="Domains watched until they can be registered.", no_args_is_help=True)

DOMAIN = typer.Argument(..., help="The domain, e.g. cloudnest.com.")
JSON = typer.Option(False, "--json", help="Print JSON.")


@app.command("add")
def add(
    domain: str = DOMAIN,
    notes: str | None = typer.Option(None, "--notes", help="Why it is watched."),
    as_json: bool = JSON,
) -> None:
    """Watch DOMAIN: the next poll checks it. An invalid or already watched name: exit 2."""
    name, text = watched_domain(domain), checked_notes(notes)
    runtime = open_runtime()
    entry = WatchlistStore(runtime.engine).add(name, text, runtime.clock())
    if as_json:
        print_model(WatchEntryOut.of(entry))
        return
    console.print(f"watching {entry.domain}")
    if entry.in_portfolio:
        console.print(f"note: {entry.domain} is already in your portfolio")


@app.command("remove")
def remove(domain: str = DOMAIN) -> None:
    """Stop watching DOMAIN (exit 2 if it is not watched)."""
    name = watched_domain(domain)
    WatchlistStore(open_runtime().engine).remove(name)
    console.print(f"no longer watching {name}")


@app.command("list")
def list_entries(as_json: bool = JSON) -> None:
    """Every watched domain with its last status, its registry's drop phase and the day it
    should drop, when it was checked, whether its availability was notified, and whether you
    already hold it ("held": an active portfolio entry)."""
    entries = WatchlistStore(open_runtime(read_only=True).engine).entries()
    if as_json:
        print_model([WatchEntryOut.of(entry) for entry in entries])
        return
    table = Table(
        "domain", "status", "drop phase", "drops", "last checked", "notified", "held", "notes"
    )
    for entry in entries:
        table.add_row(
            entry.domain,
            entry.last_status or "not checked",
            _phase(entry),
            _drops(entry),
            short_time(entry.last_checked_at),
            _notified(entry),
            "in portfolio" if entry.in_portfolio else "-",
            clip(entry.notes, 40),
        )
    console.print(table)


@app.command("poll")
def poll(
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Look up and report; record nothing, notify nobody."
    ),
    as_json: bool = JSON,
) -> None:
    """Poll the entries that are due now, in this process (what the WATCHLIST_POLL job does):
    DNS, then RDAP; a name that became available is notified once."""
    runtime = open_runtime()
    result = poll_watchlist(
        runtime.settings,
        runtime.engine,
        runtime.notifier,
        runtime.clock,
        dry_run=dry_run,
        stop=threading.Event(),
        gate=printed_waits(runtime.rate_gate),
    )
    if as_json:
        print_json(result.document())
        return
    prefix = "dry run: " if dry_run else ""
    verb = "would notify" if dry_run else "notified"
    console.print(
        f"{prefix}checked {result.checked}, available {result.available}, {verb} "
        f"{result.notified}, errors {len(result.errors)}, drop status changes "
        f"{result.drop_changes}"
    )
    for error in result.errors:
        console.print(f"  {error['domain']}: {error['error']}")


def _phase(entry: WatchEntry) -> str:
    if entry.drop_phase is None:
        return "-"
    return DropPhase(entry.drop_phase).label


def _drops(entry: WatchEntry) -> str:
    """The expected day, or why there is none (only for a name in a drop phase)."""
    if entry.drop_phase in (None, DropPhase.NONE.value):
        return "-"
    if entry.expected_drop_on is None:
        return clip(entry.drop_estimate, 40)
    return f"~{entry.expected_drop_on.isoformat()}"


def _notified(entry: WatchEntry) -> str:
    if not entry.notified:
        return "-"
    return f"yes, {short_time(entry.notified_at)}"
