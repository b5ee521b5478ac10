"""/portfolio/entries/{domain}: one name's details, the reasons for its verdict, its trademark
match when one is known, its history (verdict changes, the sale or the drop) and its outcomes;
forms to record a sale or a drop, which go through the portfolio service as `dominus portfolio
sold|drop` do (the service checks what it is given and writes the ledger)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from dominus.api.services import ApiServices, Services
from dominus.backtest.ledger import ledger_service
from dominus.jobs.documents import dumped
from dominus.portfolio.documents import EntryOut
from dominus.portfolio.model import PortfolioInputError
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import PortfolioReader
from dominus.portfolio.values import parse_amount
from dominus.portfolio.verdicts import money_words
from dominus.web.context import Dashboard, Web
from dominus.web.routes.forms import first, form_fields, notice_job, notice_text, see_other

router = APIRouter()
EntryName = Annotated[str, Path(max_length=300)]
MAX_VENUE_LENGTH = 200  # the outcomes table's column
SALE_FIELDS = ("price", "fees", "date", "venue")
DROP_FIELDS = ("date", "confirm")


def _service(api: ApiServices) -> PortfolioService:
    """The ledger's service, as the API and the CLI build it: a sale enqueues BACKTEST_BUILD."""
    return ledger_service(api.runtime.engine, api.runtime.settings, api.queue)


def _entry_page(
    request: Request,
    api: ApiServices,
    web: Dashboard,
    domain: str,
    *,
    sale_form: dict[str, str] | None = None,
    sale_error: str | None = None,
    drop_form: dict[str, str] | None = None,
    drop_error: str | None = None,
    status_code: int = 200,
) -> Response:
    service = _service(api)
    entry = service.get(domain)  # an unknown name: the 404 page
    reader = PortfolioReader(api.runtime.engine)
    history = reader.list_history(entry.domain)
    document = dumped(EntryOut.of(entry, api.now(), history, service.renewal_price(entry)))
    currency = entry.currency
    return web.pages.render(
        request,
        "portfolio_entry.html",
        status_code=status_code,
        title=entry.domain,
        entry=document,
        trademark=trademark_of(document),
        details=document.get("score_details") or {},
        history=list(reversed(document["history"] or [])),  # the latest first
        outcomes=reader.list_outcomes(entry.domain),
        money=lambda value: "—" if value is None else money_words(float(value), currency),
        sale_form=sale_form or dict.fromkeys(SALE_FIELDS, ""),
        sale_error=sale_error,
        drop_form=drop_form or dict.fromkeys(DROP_FIELDS, ""),
        drop_error=drop_error,
        today=api.now().date().isoformat(),
        notice=notice_text(request),
        notice_job=notice_job(request),
    )


def trademark_of(document: dict[str, Any]) -> dict[str, str] | None:
    """The entry's trademark match ({mark, rule}) when its document carries one; an entry never
    checked, or a document without the field, has none to show."""
    found = document.get("trademark")
    if not isinstance(found, dict) or not found.get("mark"):
        return None
    return {"mark": str(found["mark"]), "rule": str(found.get("rule") or "")}


@router.get("/portfolio/entries/{domain}")
def entry_page(request: Request, domain: EntryName, api: Services, web: Web) -> Response:
    return _entry_page(request, api, web, domain)


@router.post("/portfolio/entries/{domain}/sold")
async def record_sale(request: Request, domain: EntryName, api: Services, web: Web) -> Response:
    """Close the name as sold (price, fees, date, venue as `portfolio sold` takes them); a
    value the service refuses shows the page again with the form as typed and why."""
    fields = await form_fields(request)
    form = {name: first(fields, name).strip() for name in SALE_FIELDS}

    def record() -> Response:
        try:
            venue = _venue(form["venue"])
            result = _service(api).sold(
                domain,
                price=_amount("price", form["price"], required=True) or 0.0,
                fees=_amount("fees", form["fees"]) or 0.0,
                on=_day(form["date"]),
                venue=venue,
                now=api.now(),
            )
        except PortfolioInputError as error:
            return _entry_page(
                request, api, web, domain, sale_form=form, sale_error=error.message,
                status_code=_refusal_status(error),
            )  # fmt: skip
        return see_other(_entry_path(result["domain"]), "sold")

    return await run_in_threadpool(record)


@router.post("/portfolio/entries/{domain}/drop")
async def record_drop(request: Request, domain: EntryName, api: Services, web: Web) -> Response:
    """Close the name as dropped (not renewed), as `portfolio drop` does, once the form's
    confirmation box is ticked (a drop cannot be undone from here)."""
    fields = await form_fields(request)
    form = {name: first(fields, name).strip() for name in DROP_FIELDS}

    def record() -> Response:
        try:
            if form["confirm"] != "yes":
                raise PortfolioInputError("tick the box to confirm the drop")
            result = _service(api).drop(domain, on=_day(form["date"]), now=api.now())
        except PortfolioInputError as error:
            return _entry_page(
                request, api, web, domain, drop_form=form, drop_error=error.message,
                status_code=_refusal_status(error),
            )  # fmt: skip
        return see_other(_entry_path(result["domain"]), "dropped")

    return await run_in_threadpool(record)


def _refusal_status(error: PortfolioInputError) -> int:
    """409 for a name already closed, 422 for what the form says."""
    return 409 if error.code == "conflict" else 422


def _entry_path(domain: str) -> str:
    """`domain`: the name as the service wrote it (checked, normalised)."""
    return f"/portfolio/entries/{domain}"


def _amount(name: str, text: str, *, required: bool = False) -> float | None:
    if not text:
        if required:
            raise PortfolioInputError(f"{name}: an amount is required")
        return None
    try:
        return parse_amount(text)
    except ValueError as error:
        raise PortfolioInputError(f"{name}: {error}") from None


def _day(text: str) -> date | None:
    if not text:
        return None  # the service's default: today (UTC)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise PortfolioInputError(f"date {text[:40]!r}: write it as YYYY-MM-DD") from None


def _venue(text: str) -> str | None:
    if len(text) > MAX_VENUE_LENGTH or "\x00" in text:
        raise PortfolioInputError(
            f"venue: at most {MAX_VENUE_LENGTH} characters, without a NUL character"
        )
    return text or None
