"""/portfolio: the names held with their verdicts and renewal clocks (filtered by status,
verdict, registrar, TLD and renewal window), renewals due per month (the portfolio report's own
figures), **Rescore now**, the open renewal alerts (acknowledge one or all) and the watchlist
(add, remove; each name's drop status). Reads and writes go through the same services as
/api/v1/portfolio, /alerts and /watchlist."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.responses import Response

from dominus.api.params import DIGITS_ONLY
from dominus.api.services import ApiServices, Services
from dominus.handlers.portfolio_rescore import PORTFOLIO_RESCORE
from dominus.jobs.documents import dumped
from dominus.jobs.model import EnqueueResult
from dominus.portfolio.documents import EntryOut
from dominus.portfolio.report import build_report
from dominus.portfolio.rescore import rescore_dedupe_key
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import PortfolioReader
from dominus.portfolio.verdicts import money_words
from dominus.renewals.documents import AlertOut
from dominus.renewals.store import AlertStore
from dominus.watchlist.documents import WatchEntryOut
from dominus.watchlist.drops import DropPhase
from dominus.watchlist.model import (
    InvalidWatchDomainError,
    InvalidWatchlistInputError,
    WatchlistEntryExistsError,
    WatchlistEntryNotFoundError,
    watched_domain,
)
from dominus.watchlist.store import WatchlistStore, checked_notes
from dominus.web.context import Dashboard, Web
from dominus.web.routes.forms import first, form_fields, notice_job, notice_text, see_other
from dominus.web.routes.portfolio_filters import (
    MAX_WINDOW_DAYS,
    STATUS_CHOICES,
    VERDICT_CHOICES,
    EntryFilter,
    StatusChoice,
    VerdictChoice,
    blank_as_none,
    choices,
)

router = APIRouter()
AlertId = Annotated[int, Path(ge=1, le=2**63 - 1), DIGITS_ONLY]
WatchedName = Annotated[str, Path(max_length=300)]
EMPTY_FORM = {"domain": "", "notes": ""}


def _portfolio_page(
    request: Request,
    api: ApiServices,
    web: Dashboard,
    *,
    all_alerts: bool = False,
    listed: EntryFilter | None = None,
    watch_form: dict[str, str] | None = None,
    watch_error: str | None = None,
    status_code: int = 200,
) -> Response:
    service = PortfolioService(api.runtime.engine, api.runtime.settings)
    reader = PortfolioReader(api.runtime.engine)
    now = api.now()
    currency = service.currency
    # The report is `dominus portfolio report`'s: every entry (sold and dropped ones are left
    # out of the renewals by the report itself) and the ledger's outcomes.
    report = build_report(
        reader.list_entries(status=None), reader.list_outcomes(), currency, now, service.pricing
    )
    alerts = AlertStore(api.runtime.engine).alerts(include_closed=all_alerts)
    listed = listed or EntryFilter()
    status = None if listed.status == "all" else listed.status
    entries = [
        dumped(EntryOut.of(entry, now, renewal=service.renewal_price(entry)))
        for entry in service.entries(status=status)
    ]
    return web.pages.render(
        request,
        "portfolio.html",
        status_code=status_code,
        title="Portfolio",
        entries=[entry for entry in entries if listed.matches(entry)],
        entries_total=len(entries),
        listed=listed,
        filter_form=listed.form(),
        status_choices=STATUS_CHOICES,
        verdict_choices=VERDICT_CHOICES,
        registrars=choices(entries, "registrar"),
        tlds=choices(entries, "tld"),
        max_window_days=MAX_WINDOW_DAYS,
        report=report,
        money=lambda value: "—" if value is None else money_words(float(value), currency),
        alerts=[dumped(AlertOut.of(alert)) for alert in alerts],
        all_alerts=all_alerts,
        watchlist=[
            dumped(WatchEntryOut.of(entry))
            for entry in WatchlistStore(api.runtime.engine).entries()
        ],
        drop_labels={phase.value: phase.label for phase in DropPhase},
        watch_form=watch_form or EMPTY_FORM,
        watch_error=watch_error,
        notice=notice_text(request),
        notice_job=notice_job(request),
    )


@router.get("/portfolio")
def portfolio(
    request: Request,
    api: Services,
    web: Web,
    all_alerts: bool = False,
    status: StatusChoice = "active",
    verdict: VerdictChoice | Literal[""] = "",
    registrar: Annotated[str | None, Query(max_length=200)] = None,
    tld: Annotated[str | None, Query(max_length=63)] = None,
    renewal_within: Annotated[str | None, Query(max_length=10)] = None,
) -> Response:
    """The page; the query names which entries its list shows (every active one by default):
    a blank value asks for nothing."""
    listed = EntryFilter(
        status=status,
        verdict=verdict or None,
        registrar=blank_as_none(registrar),
        tld=blank_as_none(tld),
        renewal_within=_window(renewal_within),
    )
    return _portfolio_page(request, api, web, all_alerts=all_alerts, listed=listed)


def _window(text: str | None) -> int | None:
    days = blank_as_none(text)
    if days is None:
        return None
    if not (days.isascii() and days.isdigit()) or int(days) > MAX_WINDOW_DAYS:
        raise HTTPException(422, f"renewal within: days from 0 to {MAX_WINDOW_DAYS:,}")
    return int(days)


def enqueue_rescore(api: ApiServices, name: str | None) -> EnqueueResult:
    """PORTFOLIO_RESCORE for `name` (an entry's checked name) or every active entry, as
    `dominus portfolio rescore` enqueues it: while one for that scope is pending or running,
    that one is returned (`created` false)."""
    payload = {} if name is None else {"domain": name}
    return api.queue.enqueue_job(PORTFOLIO_RESCORE, payload, dedupe_key=rescore_dedupe_key(name))


@router.post("/portfolio/rescore")
async def rescore(request: Request, api: Services) -> Response:
    """**Rescore now**: for every active name, or for the entry the form names (`domain`).
    Back to the page the button was on, which links the job."""
    fields = await form_fields(request)
    domain = first(fields, "domain").strip() or None

    def enqueue() -> Response:
        service = PortfolioService(api.runtime.engine, api.runtime.settings)
        name = None if domain is None else service.get(domain).domain
        queued = enqueue_rescore(api, name)
        page = "/portfolio" if name is None else f"/portfolio/entries/{name}"
        notice = "rescore-queued" if queued.created else "rescore-pending"
        return see_other(page, notice, job=queued.job_id)

    return await run_in_threadpool(enqueue)


@router.post("/portfolio/alerts/ack")
def acknowledge_all_alerts(api: Services) -> Response:
    """**Acknowledge all**, as `dominus alerts ack --all` and `POST /api/v1/alerts/ack`: every
    open alert, through the same store call."""
    acknowledged = AlertStore(api.runtime.engine).acknowledge_all(api.now())
    return see_other("/portfolio", "alerts-acknowledged" if acknowledged else "no-open-alert")


@router.post("/portfolio/alerts/{alert_id}/ack")
def acknowledge_alert(alert_id: AlertId, api: Services) -> Response:
    """As `POST /api/v1/alerts/{id}/ack`: acknowledging again keeps the first time; an
    unknown id is a 404 page."""
    AlertStore(api.runtime.engine).acknowledge(alert_id, api.now())
    return see_other("/portfolio", "alert-acknowledged")


@router.post("/portfolio/watchlist")
async def watch(request: Request, api: Services, web: Web) -> Response:
    """Watch a domain, as `POST /api/v1/watchlist`; an invalid name or notes, or a name
    already watched, show the page again with the form as typed and what is wrong."""
    fields = await form_fields(request)
    form = {name: first(fields, name) for name in ("domain", "notes")}
    try:
        domain, notes = watched_domain(form["domain"].strip()), checked_notes(form["notes"])
        WatchlistStore(api.runtime.engine).add(domain, notes, api.now())
    except (InvalidWatchlistInputError, WatchlistEntryExistsError) as error:
        status = 409 if isinstance(error, WatchlistEntryExistsError) else 422
        return _portfolio_page(
            request, api, web, watch_form=form, watch_error=error.message, status_code=status
        )
    return see_other("/portfolio", "watch-added")


@router.post("/portfolio/watchlist/{domain}/remove")
def unwatch(domain: WatchedName, api: Services) -> Response:
    """Stop watching a domain, as `DELETE /api/v1/watchlist/{domain}` (404 page when it is
    not watched)."""
    try:
        name = watched_domain(domain)
    except InvalidWatchDomainError as error:
        raise WatchlistEntryNotFoundError(f"{error.message}; it is not on the watchlist") from None
    WatchlistStore(api.runtime.engine).remove(name)
    return see_other("/portfolio", "watch-removed")
