"""`dominus portfolio ...`: the names held, their renewals, verdicts, imports and the ledger."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from dominus.backtest.ledger import ledger_service
from dominus.cli.csv_file import write_text_file
from dominus.cli.gate_waits import printed_waits
from dominus.cli.jobs import EXIT_FOR_STATUS
from dominus.cli.output import clip, console, errors, print_json, print_model
from dominus.cli.runtime import Runtime, open_runtime
from dominus.cli.signals import on_stop_signals
from dominus.cli.waiting import wait_until
from dominus.handlers.portfolio_rescore import PORTFOLIO_RESCORE
from dominus.jobs.documents import dumped
from dominus.jobs.model import Job
from dominus.portfolio import rescore as rescoring
from dominus.portfolio.csv_export import csv_lines, entries_csv
from dominus.portfolio.csv_import import (
    ImportOptions,
    ImportReport,
    PortfolioImporter,
    decode,
    parse_mapping,
)
from dominus.portfolio.documents import (
    EntryOut,
    ImportReportOut,
    LedgerDropOut,
    LedgerSaleOut,
    RescoreQueuedOut,
)
from dominus.portfolio.model import (
    EntryFields,
    PortfolioEntry,
    PortfolioInputError,
    days_until_renewal,
)
from dominus.portfolio.report import REPORT_COLUMNS, build_report, report_rows
from dominus.portfolio.rescore import rescore_dedupe_key, stored_result
from dominus.portfolio.service import PortfolioService, valid_domain
from dominus.portfolio.store import PortfolioReader
from dominus.portfolio.values import parse_amount
from dominus.portfolio.verdicts import money_words

app = typer.Typer(
    help="The portfolio: names held, renewals, verdicts (keep/drop/reprice), imports, ledger.",
    no_args_is_help=True,
)

DOMAIN = typer.Argument(..., help="The domain, e.g. example.com.")
JSON = typer.Option(False, "--json", help="Print JSON.")


def _service(*, read_only: bool = False) -> tuple[Runtime, PortfolioService]:
    runtime = open_runtime(read_only=read_only)
    return runtime, PortfolioService(runtime.engine, runtime.settings)


def _amount(option: str, text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return parse_amount(text)
    except ValueError as error:
        raise PortfolioInputError(f"{option}: {error}") from None


def _date(option: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise PortfolioInputError(f"{option} {text!r}: write the date as YYYY-MM-DD") from None


def _refuse_csv_with_json(csv_path: Path | None, as_json: bool, force: bool) -> None:
    if csv_path is not None and as_json:
        raise PortfolioInputError("--csv and --json exclude each other")
    if force and csv_path is None:
        raise PortfolioInputError("--force goes with --csv")


@app.command("add")
def add(
    domain: str = DOMAIN,
    renewal_date: str = typer.Option(..., "--renewal-date", help="Next renewal, YYYY-MM-DD."),
    acquired_at: str | None = typer.Option(None, "--acquired-at", help="YYYY-MM-DD."),
    acquisition_cost: str | None = typer.Option(None, "--acquisition-cost", help="Paid for it."),
    renewal_cost: str | None = typer.Option(
        None, "--renewal-cost", help="A year's renewal (default: looked up, ADR 0046)."
    ),
    registrar: str | None = typer.Option(None, "--registrar", help="Where it is registered."),
    list_price: str | None = typer.Option(None, "--list-price", help="Its asking price."),
    renewals_paid: str | None = typer.Option(
        None, "--renewals-paid", help="Money paid in renewals so far."
    ),
    notes: str | None = typer.Option(None, "--notes"),
    auto_renew: bool | None = typer.Option(
        None, "--auto-renew/--no-auto-renew", help="Whether the registrar renews it by itself."
    ),
    as_json: bool = JSON,
) -> None:
    """Add a name to the portfolio (amounts in the scoring currency, SCORING_CURRENCY)."""
    values = EntryFields(
        renewal_date=_date("--renewal-date", renewal_date),
        acquired_at=_date("--acquired-at", acquired_at),
        acquisition_cost=_amount("--acquisition-cost", acquisition_cost),
        renewal_cost=_amount("--renewal-cost", renewal_cost),
        registrar=registrar,
        list_price=_amount("--list-price", list_price),
        renewals_paid=_amount("--renewals-paid", renewals_paid),
        notes=notes,
        auto_renew=auto_renew,
    )
    name = valid_domain(domain)
    runtime, service = _service()
    entry = service.add(name, values, runtime.clock())
    if as_json:
        print_model(EntryOut.of(entry, runtime.clock(), renewal=service.renewal_price(entry)))
        return
    console.print(f"{entry.domain} added: verdict {entry.verdict} ({entry.verdict_reason})")


@app.command("import")
def import_csv(
    path: Path = typer.Argument(..., help="The CSV export to read."),
    mapping: str | None = typer.Option(
        None, "--map", help="field=column,... e.g. domain=Name,renewal_date=Expires."
    ),
    date_format: str | None = typer.Option(
        None, "--date-format", help="strptime codes, e.g. %d/%m/%Y (needed for 03/04/2030)."
    ),
    decimal_comma: bool = typer.Option(
        False, "--decimal-comma", help="Amounts like 1.250,00 (comma as decimal mark)."
    ),
    preset: str | None = typer.Option(
        None,
        "--preset",
        help="godaddy, dynadot, namecheap, networksolutions, sav, parkio, efty, afternic, sedo.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change; write nothing."),
    skip_invalid: bool = typer.Option(
        False, "--skip-invalid", help="Import the valid rows even when some are invalid."
    ),
    as_json: bool = JSON,
) -> None:
    """Import names from a registrar's or marketplace's CSV export. Invalid rows are listed by
    line and column; by default nothing is written when any row is invalid."""
    options = ImportOptions(
        preset=preset,
        mapping=parse_mapping(mapping) if mapping else {},
        date_format=date_format,
        decimal_comma=decimal_comma,
        dry_run=dry_run,
        skip_invalid=skip_invalid,
    )
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PortfolioInputError(f"cannot read {path}: {error.strerror or error}") from None
    text = decode(data)
    runtime, service = _service()
    report = PortfolioImporter(service).run(text, options, runtime.clock())
    if as_json:
        print_model(ImportReportOut.of(report))
        return
    _print_import(report)


def _print_import(report: ImportReport) -> None:
    prefix = "would be " if report.dry_run else ""
    if report.dry_run:
        for name, column in report.columns.items():
            console.print(f"column {column!r} → {name}", markup=False)
        ignored = ", ".join(repr(column) for column in report.ignored) or "none"
        console.print(f"columns ignored: {ignored}", markup=False)
    for domain in report.added:
        console.print(f"{prefix}added: {domain}")
    for item in report.updated:
        console.print(f"{prefix}updated: {item['domain']} ({', '.join(item['changes'])})")
    for problem in report.refused:
        console.print(f"refused: {problem}")
    for item in report.skipped:
        console.print(f"skipped: line {item['line']}: {item['domain']} ({item['reason']})")
    console.print(
        f"{len(report.added)} {prefix}added, {len(report.updated)} {prefix}updated, "
        f"{len(report.unchanged)} unchanged, {len(report.refused)} refused, "
        f"{len(report.skipped)} skipped" + (" (dry run: nothing written)" if report.dry_run else "")
    )


@app.command("list")
def list_entries(
    as_json: bool = JSON,
    csv_path: Path | None = typer.Option(
        None, "--csv", metavar="PATH", help="Write the entries to a CSV file (UTF-8, BOM)."
    ),
    force: bool = typer.Option(False, "--force", help="With --csv: overwrite an existing file."),
    every: bool = typer.Option(False, "--all", help="Sold and dropped names too."),
) -> None:
    """The names held, soonest renewal first."""
    _refuse_csv_with_json(csv_path, as_json, force)
    runtime, service = _service(read_only=True)
    entries = service.entries(status=None if every else "active")
    if csv_path is not None:
        write_text_file(csv_path, entries_csv(entries), force=force)
        console.print(f"{len(entries)} entries written to {csv_path}")
        return
    now = runtime.clock()
    if as_json:
        print_model(
            [EntryOut.of(entry, now, renewal=service.renewal_price(entry)) for entry in entries]
        )
        return
    table = Table(
        "domain", "renews", "days", "renewal", "renewal price", "score", "list price", "verdict",
        "auto-renew", "registrar status",
    )  # fmt: skip
    for entry in entries:
        renewal = service.renewal_price(entry)
        table.add_row(
            entry.domain,
            entry.renewal_date.isoformat(),
            str(days_until_renewal(entry.renewal_date, now)),
            _money(renewal.amount, entry.currency),
            renewal.label,
            "-" if entry.current_score is None else f"{entry.current_score:g}",
            _money(entry.list_price, entry.currency),
            _flagged(entry, entry.verdict or "-" if entry.status == "active" else entry.status),
            _flag(entry.auto_renew),
            _registrar_status(entry),
        )
    console.print(table)


def _flagged(entry: PortfolioEntry, verdict: str) -> str:
    """The verdict, after a "⚠ TM 'mark'" marker when the name matches a trademark (UDRP risk
    comes first, whatever the money says)."""
    risk = entry.trademark
    return verdict if risk is None else f"⚠ TM '{risk.mark}' · {verdict}"


def _flag(value: bool | None) -> str:
    return "?" if value is None else ("on" if value else "off")


def _registrar_status(entry: PortfolioEntry) -> str:
    """The registrar's status; an expired name says so in capitals, whatever the export
    wrote, so it stands out in a listing."""
    if entry.expired_at_registrar:
        return "EXPIRED"
    return entry.registrar_status or "-"


def _money(value: float | None, currency: str) -> str:
    return "-" if value is None else money_words(value, currency)


@app.command("show")
def show(domain: str = DOMAIN, as_json: bool = JSON) -> None:
    """One entry: its figures, verdict and history."""
    runtime, service = _service(read_only=True)
    entry = service.get(domain)
    history = PortfolioReader(runtime.engine).list_history(entry.domain)
    shown = EntryOut.of(entry, runtime.clock(), history, service.renewal_price(entry))
    if as_json:
        print_model(shown)
        return
    document = dumped(shown)
    if entry.trademark is not None:
        console.print(f"⚠ {entry.trademark.words()}")
        document["trademark"] = f"{entry.trademark.mark} (rule: {entry.trademark.rule})"
    if entry.expired_at_registrar:
        console.print(f"EXPIRED at the registrar (status {entry.registrar_status!r})")
    for key, value in document.items():
        if key not in ("history", "score_details"):
            console.print(f"{key}: {'-' if value is None else value}")
    for event in document["history"]:
        change = event["kind"] if event["kind"] != "verdict" else f"{event['from']} → {event['to']}"
        console.print(f"  {event['at']}  {change}: {event['reason']}")


@app.command("remove")
def remove(domain: str = DOMAIN) -> None:
    """Delete an entry and its history (a mistake undone; use `sold` or `drop` to close one)."""
    _, service = _service()
    entry = service.remove(domain)
    console.print(f"{entry.domain} removed")


@app.command("verdicts")
def verdicts(as_json: bool = JSON) -> None:
    """Judge every active name as of now (DROP_METHOD), record the verdicts that changed, and
    list them all with their reasons."""
    runtime, service = _service()
    now = runtime.clock()
    changes = {change.domain for change in service.refresh_verdicts(now)}
    entries = service.entries()
    if as_json:
        print_json(
            [
                {
                    "domain": entry.domain,
                    "verdict": entry.verdict,
                    "reason": entry.verdict_reason,
                    "changed": entry.domain in changes,
                    "days_until_renewal": days_until_renewal(entry.renewal_date, now),
                    "trademark": None if entry.trademark is None else entry.trademark.to_dict(),
                }
                for entry in entries
            ]
        )
        return
    table = Table("domain", "verdict", "reason")
    for entry in entries:
        mark = " (new)" if entry.domain in changes else ""
        verdict = _flagged(entry, f"{entry.verdict}{mark}")
        table.add_row(entry.domain, verdict, entry.verdict_reason or "")
    console.print(table)
    console.print(f"method: {service.rules.method}")


@app.command("rescore")
def rescore(
    domain: str | None = typer.Argument(None, help="One entry (default: every active one)."),
    sync: bool = typer.Option(False, "--sync", help="Rescore here and now, without a worker."),
    wait: bool = typer.Option(False, "--wait", help="Enqueue, then wait for the result."),
    timeout: float | None = typer.Option(None, "--timeout", min=0, help="With --wait."),
    as_json: bool = JSON,
) -> None:
    """Appraise the names again (as `dominus score` does) and refresh their verdicts. By default
    a PORTFOLIO_RESCORE job is enqueued; --sync runs it here, --wait follows the job."""
    if sync and wait:
        raise PortfolioInputError("--sync and --wait exclude each other")
    runtime, service = _service()
    name = None if domain is None else service.get(domain).domain
    if sync:
        _print_rescore(_rescore_here(runtime, name), as_json)
        return
    payload = {} if name is None else {"domain": name}
    queued = runtime.queue().enqueue_job(
        PORTFOLIO_RESCORE, payload, dedupe_key=rescore_dedupe_key(name)
    )
    if not wait:
        if as_json:
            print_model(RescoreQueuedOut(job_id=queued.job_id, created=queued.created))
        else:
            console.print(
                f"job {queued.job_id} {'enqueued' if queued.created else 'already pending'}"
            )
        return
    job = _wait_for(runtime, queued.job_id, timeout)
    if job.result is not None:
        _print_rescore(stored_result(job.result), as_json)
    elif job.last_error:
        errors.print(f"job {job.id} {job.status.value}: {clip(job.last_error, 200)}")
    raise typer.Exit(EXIT_FOR_STATUS[job.status])


def _rescore_here(runtime: Runtime, name: str | None) -> dict[str, Any]:
    stop = threading.Event()
    on_stop_signals(lambda _received, _count: stop.set())
    result = rescoring.rescore(
        runtime.settings,
        runtime.engine,
        runtime.clock,
        name,
        stop=stop,
        on_progress=lambda domain, done, total: errors.print(f"{done}/{total} {domain}"),
        gate=printed_waits(runtime.rate_gate),
    )
    return result.to_dict()


def _wait_for(runtime: Runtime, job_id: int, timeout: float | None) -> Job:
    store = runtime.store
    return wait_until(
        lambda: store.get_job(job_id),
        lambda job: job.status.is_terminal,
        timeout=timeout,
        still=lambda job: f"job {job_id}: still {job.status.value}",
    )


def _print_rescore(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(result)
        return
    console.print(
        f"{result['rescored']} rescored, {result['unchanged']} unchanged, "
        f"{len(result['errors'])} failed, {len(result['verdict_changes'])} verdict change(s) "
        f"in {result['total_duration_ms']} ms"
    )
    for error in result["errors"]:
        console.print(f"error: {error['domain']}: {error['error']} (previous score kept)")
    for change in result["verdict_changes"]:
        console.print(f"{change['domain']}: {change['from']} → {change['to']}: {change['reason']}")


@app.command("sold")
def sold(
    domain: str = DOMAIN,
    price: str = typer.Option(..., "--price", help="What the buyer paid."),
    fees: str | None = typer.Option(None, "--fees", help="Commission and fees (default 0)."),
    on: str | None = typer.Option(
        None, "--date", help="YYYY-MM-DD, not after today (default: today, UTC)."
    ),
    venue: str | None = typer.Option(None, "--venue", help="Where it sold."),
    as_json: bool = JSON,
) -> None:
    """Close an entry as sold: realised profit = price − fees − acquisition − renewals paid;
    the sale is recorded as an outcome and, with a price, enqueues BACKTEST_BUILD (one while
    one is pending), as `outcomes add` does."""
    amount = _amount("--price", price)
    assert amount is not None
    runtime = open_runtime()
    result = ledger_service(runtime.engine, runtime.settings, runtime.queue()).sold(
        domain,
        price=amount,
        fees=_amount("--fees", fees) or 0.0,
        on=_date("--date", on),
        venue=venue,
        now=runtime.clock(),
    )
    if as_json:
        print_model(LedgerSaleOut.model_validate(result))
        return
    currency = result["currency"]
    profit = result["realised_profit"]
    console.print(
        f"{result['domain']} sold for {money_words(result['price'], currency)}: realised profit "
        + ("unknown (cost unknown)" if profit is None else money_words(profit, currency))
        + _build_words(result)
    )


def _build_words(result: dict[str, Any]) -> str:
    if result["build_job_id"] is None:
        return ""
    state = "enqueued" if result["build_created"] else "already pending"
    return f"; BACKTEST_BUILD job {result['build_job_id']} {state}"


@app.command("drop")
def drop(
    domain: str = DOMAIN,
    on: str | None = typer.Option(
        None, "--date", help="YYYY-MM-DD, not after today (default: today, UTC)."
    ),
    as_json: bool = JSON,
) -> None:
    """Close an entry as dropped (not renewed); its sunk cost is recorded as an outcome."""
    runtime = open_runtime()
    service = ledger_service(runtime.engine, runtime.settings, runtime.queue())
    result = service.drop(domain, on=_date("--date", on), now=runtime.clock())
    if as_json:
        print_model(LedgerDropOut.model_validate(result))
        return
    cost = result["sunk_cost"]
    sunk = "unknown (cost unknown)" if cost is None else money_words(cost, result["currency"])
    console.print(f"{result['domain']} dropped: sunk cost {sunk}")


@app.command("report")
def report(
    as_json: bool = JSON,
    csv_path: Path | None = typer.Option(
        None, "--csv", metavar="PATH", help="Write the report as one CSV table (UTF-8, BOM)."
    ),
    force: bool = typer.Option(False, "--force", help="With --csv: overwrite an existing file."),
) -> None:
    """Renewals due per month (next 12), money at risk on drop names, cost vs suggested list
    value, realised and unrealised profit and ROI per year, verdict counts, and the drop names
    whose auto-renew to turn off (or check)."""
    _refuse_csv_with_json(csv_path, as_json, force)
    runtime, service = _service(read_only=True)
    reader = PortfolioReader(runtime.engine)
    document = build_report(
        reader.list_entries(status=None),
        reader.list_outcomes(),
        service.currency,
        runtime.clock(),
        service.pricing,
    )
    if csv_path is not None:
        write_text_file(csv_path, csv_lines(REPORT_COLUMNS, report_rows(document)), force=force)
        console.print(f"report written to {csv_path}")
        return
    if as_json:
        print_json(document)
        return
    _print_report(document)


def _print_report(document: dict[str, Any]) -> None:
    currency = document["currency"]
    risks = document["trademark_risk"]
    if risks:
        table = Table(
            "domain", "mark", "rule", "verdict", title="⚠ UDRP risk: names matching a mark"
        )
        for risk in risks:
            table.add_row(risk["domain"], risk["mark"], risk["rule"], risk["verdict"] or "-")
        console.print(table)
    table = Table("month", "renewals", "cost", title="Renewals due")
    for month in document["renewals_due"]:
        unknown = f" (+{month['unknown_cost']} unknown)" if month["unknown_cost"] else ""
        table.add_row(
            month["month"], str(month["renewals"]), money_words(month["cost"], currency) + unknown
        )
    console.print(table)
    sources = document["renewal_price_sources"]
    console.print(
        "renewal prices used: "
        + ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in sources.items() if count)
    )
    risk = document["money_at_risk"]
    console.print(
        f"money at risk on drop names: {risk['names']} name(s), renewals "
        f"{money_words(risk['renewal_cost'], currency)} due within 12 months, "
        f"{money_words(risk['sunk_cost'], currency)} already sunk"
        + _left_out(risk["sunk_cost_unknown"], " (sunk cost of {} left out: cost unknown)")
    )
    value = document["value"]
    console.print(
        f"acquisition cost {money_words(value['acquisition_cost'], currency)} vs suggested list "
        f"value {money_words(value['suggested_list_value'], currency)} ({value['names']} names, "
        f"{value['unscored']} unscored"
        + _left_out(value["unknown_acquisition_cost"], ", {} left out: cost unknown")
        + ")"
    )
    for year in document["realised"]:
        total = year["sold"] + year["dropped"]
        what = "sales" if not year["dropped"] else "sales and drops"
        console.print(f"realised {year['year']}: {_profit_words(year, total, what, currency)}")
    for year in document["unrealised"]:
        words = _profit_words(year, year["names"], "scored names", currency)
        console.print(f"unrealised {year['year']}: {words}")
    counts = document["verdicts"]
    console.print("verdicts: " + ", ".join(f"{name} {count}" for name, count in counts.items()))
    _print_auto_renew(document)


def _left_out(count: int, words: str) -> str:
    return words.format(count) if count else ""


def _profit_words(figures: dict[str, Any], total: int, what: str, currency: str) -> str:
    """ "profit $40 on cost $100, ROI 40.0 % on 1 of 3 sales; 2 left out: cost unknown"."""
    roi = "-" if figures["roi"] is None else f"{figures['roi'] * 100:.1f} %"
    return (
        f"profit {money_words(figures['profit'], currency)} on cost "
        f"{money_words(figures['cost'], currency)}, ROI {roi} on {figures['counted']} of "
        f"{total} {what}" + _left_out(figures["cost_unknown"], "; {} left out: cost unknown")
    )


def _print_auto_renew(document: dict[str, Any]) -> None:
    for key, label in (
        ("turn_off_auto_renew", "turn off auto-renew for these names (verdict drop)"),
        ("check_auto_renew", "check auto-renew (verdict drop, auto-renew not known)"),
    ):
        names = document[key]
        console.print(f"{label}: {len(names) or 'none'}")
        for item in names:
            console.print(f"  {item['domain']}  renews {item['renewal_date']}")
