"""`dominus watchlist ...`: watched domains, and a poll by hand."""

from __future__ import annotations

import threading

import typer
from rich.table import Table

from dominus.cli.output import clip, console, print_json, print_model, short_time
from dominus.cli.runtime import open_runtime
from dominus.watchlist.documents import WatchEntryOut
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
    else:
        console.print(f"watching {entry.domain}")


@app.command("remove")
def remove(domain: str = DOMAIN) -> None:
    """Stop watching DOMAIN (exit 2 if it is not watched)."""
    name = watched_domain(domain)
    WatchlistStore(open_runtime().engine).remove(name)
    console.print(f"no longer watching {name}")


@app.command("list")
def list_entries(as_json: bool = JSON) -> None:
    """Every watched domain with its last status, when it was checked and whether its
    availability was notified."""
    entries = WatchlistStore(open_runtime(read_only=True).engine).entries()
    if as_json:
        print_model([WatchEntryOut.of(entry) for entry in entries])
        return
    table = Table("domain", "status", "last checked", "status since", "notified", "notes")
    for entry in entries:
        table.add_row(
            entry.domain,
            entry.last_status or "not checked",
            short_time(entry.last_checked_at),
            short_time(entry.last_status_change_at),
            _notified(entry),
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
    )
    if as_json:
        print_json(result.document())
        return
    prefix = "dry run: " if dry_run else ""
    verb = "would notify" if dry_run else "notified"
    console.print(
        f"{prefix}checked {result.checked}, available {result.available}, {verb} "
        f"{result.notified}, errors {len(result.errors)}"
    )
    for error in result.errors:
        console.print(f"  {error['domain']}: {error['error']}")


def _notified(entry: WatchEntry) -> str:
    if not entry.notified:
        return "-"
    return f"yes, {short_time(entry.notified_at)}"
