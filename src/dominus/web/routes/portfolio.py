"""/portfolio: the names held with their verdicts and renewal clocks, renewals due per month
(the portfolio report's own figures), the open renewal alerts (acknowledge) and the watchlist
(add, remove). Reads and writes go through the same services as /api/v1/portfolio, /alerts and
/watchlist."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from dominus.api.services import ApiServices, Services
from dominus.jobs.documents import dumped
from dominus.portfolio.documents import EntryOut
from dominus.portfolio.report import build_report
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import PortfolioReader
from dominus.portfolio.verdicts import money_words
from dominus.renewals.documents import AlertOut
from dominus.renewals.store import AlertStore
from dominus.watchlist.documents import WatchEntryOut
from dominus.watchlist.model import (
    InvalidWatchDomainError,
    InvalidWatchlistInputError,
    WatchlistEntryExistsError,
    WatchlistEntryNotFoundError,
    watched_domain,
)
from dominus.watchlist.store import WatchlistStore, checked_notes
from dominus.web.context import Dashboard, Web
from dominus.web.routes.forms import first, form_fields, notice_text, see_other

router = APIRouter()
AlertId = Annotated[int, Path(ge=1, le=2**63 - 1)]
WatchedName = Annotated[str, Path(max_length=300)]
EMPTY_FORM = {"domain": "", "notes": ""}


def _portfolio_page(
    request: Request,
    api: ApiServices,
    web: Dashboard,
    *,
    all_alerts: bool = False,
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
    return web.pages.render(
        request,
        "portfolio.html",
        status_code=status_code,
        title="Portfolio",
        entries=[
            dumped(EntryOut.of(entry, now, renewal=service.renewal_price(entry)))
            for entry in service.entries(status="active")
        ],
        report=report,
        money=lambda value: "—" if value is None else money_words(float(value), currency),
        alerts=[dumped(AlertOut.of(alert)) for alert in alerts],
        all_alerts=all_alerts,
        watchlist=[
            dumped(WatchEntryOut.of(entry))
            for entry in WatchlistStore(api.runtime.engine).entries()
        ],
        watch_form=watch_form or EMPTY_FORM,
        watch_error=watch_error,
        notice=notice_text(request),
    )


@router.get("/portfolio")
def portfolio(request: Request, api: Services, web: Web, all_alerts: bool = False) -> Response:
    return _portfolio_page(request, api, web, all_alerts=all_alerts)


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
