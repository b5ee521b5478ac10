"""/api/v1/portfolio: the names held (CRUD), the ledger (sold, drop), CSV import, and
PORTFOLIO_RESCORE."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.convertors import StringConvertor, register_url_convertor

from dominus.api.errors import error_response
from dominus.api.multipart import MULTIPART, UnreadableMultipartError, parse_in_thread
from dominus.api.portfolio_schemas import DropIn, EntryIn, EntryPatchIn, RescoreIn, SaleIn
from dominus.api.routes.jobs import ERRORS, NO_STORE, TOO_LARGE, with_errors
from dominus.api.schemas import ErrorBody
from dominus.api.services import ApiServices, Services
from dominus.backtest.ledger import ledger_service
from dominus.handlers.portfolio_rescore import PORTFOLIO_RESCORE
from dominus.portfolio.csv_import import (
    ImportOptions,
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
from dominus.portfolio.model import EntryFields
from dominus.portfolio.rescore import rescore_dedupe_key
from dominus.portfolio.service import PortfolioService
from dominus.portfolio.store import PortfolioReader


class DomainConvertor(StringConvertor):
    """A path segment with a dot: what a domain needs at least, so `/portfolio/rescore` and
    `/portfolio/import` are never read as an entry's path (nor advertise its methods)."""

    regex = r"[^/]*\.[^/]*"


register_url_convertor("domain", DomainConvertor())

router = APIRouter(tags=["portfolio"])
# Operations that read a body: it may be too large, or not even text.
BODY_ERRORS: dict[int | str, dict[str, Any]] = with_errors(
    TOO_LARGE | {400: {"model": ErrorBody, "description": "A body that cannot be parsed"}}
)
DomainPath = Annotated[
    str,
    Path(max_length=300, pattern=r"^[^/]*\.[^/]*$", description="The domain, e.g. example.com."),
]
# A segment without a dot is not an entry's path: `/portfolio/import` and `/portfolio/rescore`
# are other operations', so another method there is 405.
NOT_AN_ENTRY: dict[int | str, dict[str, Any]] = {
    405: {"model": ErrorBody, "description": "The path names another operation, not an entry"}
}
ENTRY_ERRORS = ERRORS | NOT_AN_ENTRY
ENTRY_BODY_ERRORS = BODY_ERRORS | NOT_AN_ENTRY
T = TypeVar("T")

CSV_TYPES = ("text/csv", "text/plain", "application/csv", "application/octet-stream")
IMPORT_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "text/csv": {"schema": {"type": "string"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {"file": {"type": "string", "format": "binary"}},
                    "required": ["file"],
                }
            },
        },
    }
}


def _service(api: ApiServices) -> PortfolioService:
    return PortfolioService(api.runtime.engine, api.runtime.settings)


def _ledger(api: ApiServices) -> PortfolioService:
    return ledger_service(api.runtime.engine, api.runtime.settings, api.queue)


def _fields(body: EntryPatchIn) -> EntryFields:
    return EntryFields(
        renewal_date=body.renewal_date,
        acquired_at=body.acquired_at,
        acquisition_cost=body.acquisition_cost,
        renewal_cost=body.renewal_cost,
        registrar=body.registrar,
        list_price=body.list_price,
        renewals_paid=body.renewals_paid,
        notes=body.notes,
        auto_renew=body.auto_renew,
        registrar_status=body.registrar_status,
    )


@router.get("/portfolio", response_model=list[EntryOut], responses=ERRORS)
def list_entries(
    response: Response,
    api: Services,
    status: Annotated[
        Literal["active", "sold", "dropped", "all"],
        Query(description="Which entries: active (default), sold, dropped or all."),
    ] = "active",
) -> Any:
    """The names held, soonest renewal first, with their verdicts and the days until renewal
    (UTC calendar days)."""
    response.headers.update(NO_STORE)
    service = _service(api)
    entries = service.entries(status=None if status == "all" else status)
    now = api.now()
    return [EntryOut.of(entry, now, renewal=service.renewal_price(entry)) for entry in entries]


@router.post(
    "/portfolio/rescore",
    status_code=202,
    response_model=RescoreQueuedOut,
    responses=BODY_ERRORS | {200: {"model": RescoreQueuedOut, "description": "Already pending"}},
)
def rescore(body: RescoreIn, response: Response, api: Services) -> Any:
    """Enqueue PORTFOLIO_RESCORE for `domain` (an entry) or every active entry: 202 with the
    job's `Location`; 200 with the same job while one for that scope is pending or running."""

    def enqueue() -> Any:
        name = None if body.domain is None else _service(api).get(body.domain).domain
        payload = {} if name is None else {"domain": name}
        result = api.queue.enqueue_job(
            PORTFOLIO_RESCORE, payload, dedupe_key=rescore_dedupe_key(name)
        )
        response.headers["Location"] = f"/api/v1/jobs/{result.job_id}"
        if not result.created:
            response.status_code = 200
        return RescoreQueuedOut(job_id=result.job_id, created=result.created)

    return enqueue()


@router.post(
    "/portfolio/import",
    response_model=ImportReportOut,
    responses=BODY_ERRORS | {415: {"model": ErrorBody, "description": "Not CSV or multipart"}},
    openapi_extra=IMPORT_BODY,
)
async def import_csv(
    request: Request,
    api: Services,
    preset: Annotated[str | None, Query(max_length=40)] = None,
    map: Annotated[
        str | None, Query(max_length=2000, description="field=column,... (like --map).")
    ] = None,
    date_format: Annotated[str | None, Query(max_length=40)] = None,
    decimal_comma: bool = False,
    dry_run: bool = False,
    skip_invalid: bool = False,
) -> Any:
    """Import a registrar's or marketplace's CSV export (the body as text/csv, or a multipart
    upload's `file`), with the options of `dominus portfolio import`. Invalid rows: 422
    `invalid_import` naming their lines and columns, nothing written (unless `skip_invalid`)."""
    content_type = request.headers.get("content-type", "")
    body = await request.body()
    media = content_type.split(";", 1)[0].strip().lower()
    if media == MULTIPART:
        try:
            form = await parse_in_thread(content_type, body)
        except UnreadableMultipartError as error:
            return error_response(422, "invalid_request", str(error))
        upload = None if form is None else form.files.get("file")
        if upload is None:
            return error_response(422, "invalid_request", "the multipart body has no `file` part")
        body = upload.data
    elif media not in CSV_TYPES:
        return error_response(
            415, "unsupported_media_type", "send the CSV as text/csv or multipart/form-data"
        )

    def run() -> Any:
        options = ImportOptions(
            preset=preset,
            mapping=parse_mapping(map) if map else {},
            date_format=date_format,
            decimal_comma=decimal_comma,
            dry_run=dry_run,
            skip_invalid=skip_invalid,
        )
        report = PortfolioImporter(_service(api)).run(decode(body), options, api.now())
        return ImportReportOut.of(report)

    return await run_in_threadpool(run)


@router.post("/portfolio", status_code=201, response_model=EntryOut, responses=BODY_ERRORS)
def add(body: EntryIn, api: Services) -> Any:
    """Add a name (amounts in the scoring currency); a renewal cost left out is looked up when
    used (registrar's price, else the dearest known, else at-cost; `renewal_price_source` says
    which). 409 when it is already in the portfolio."""
    now = api.now()
    service = _service(api)
    entry = service.add(body.domain, _fields(body), now)
    return EntryOut.of(entry, now, renewal=service.renewal_price(entry))


@router.get("/portfolio/{domain:domain}", response_model=EntryOut, responses=ENTRY_ERRORS)
def get(domain: DomainPath, response: Response, api: Services) -> Any:
    """One entry with its verdict history."""
    response.headers.update(NO_STORE)

    def read() -> EntryOut:
        service = _service(api)
        entry = service.get(domain)
        history = PortfolioReader(api.runtime.engine).list_history(entry.domain)
        return EntryOut.of(entry, api.now(), history, service.renewal_price(entry))

    return read()


@router.patch("/portfolio/{domain:domain}", response_model=EntryOut, responses=ENTRY_BODY_ERRORS)
def change(domain: DomainPath, body: EntryPatchIn, api: Services) -> Any:
    """Change an entry's fields (those left out keep their values); its verdict is refreshed."""
    now = api.now()
    service = _service(api)
    entry = service.update(domain, _fields(body), now)
    return EntryOut.of(entry, now, renewal=service.renewal_price(entry))


@router.post(
    "/portfolio/{domain:domain}/sold", response_model=LedgerSaleOut, responses=ENTRY_BODY_ERRORS
)
def sold(domain: DomainPath, body: SaleIn, api: Services) -> Any:
    """Close an entry as sold (the ledger, as `dominus portfolio sold`): the sale is recorded as
    an outcome and, with a price above 0, enqueues BACKTEST_BUILD (one while one is pending).
    404 when the name is not held, 409 `conflict` when it is already sold or dropped, 422
    `invalid_outcome` for a date after today."""
    result = _ledger(api).sold(
        domain, price=body.price, fees=body.fees, on=body.date, venue=body.venue, now=api.now()
    )
    return LedgerSaleOut.model_validate(result)


@router.post(
    "/portfolio/{domain:domain}/drop", response_model=LedgerDropOut, responses=ENTRY_BODY_ERRORS
)
def drop(domain: DomainPath, api: Services, body: DropIn | None = None) -> Any:
    """Close an entry as dropped (not renewed; as `dominus portfolio drop`): its sunk cost is
    recorded as an outcome. The body is optional. 404, 409 and 422 as for `sold`."""
    on = None if body is None else body.date
    return LedgerDropOut.model_validate(_ledger(api).drop(domain, on=on, now=api.now()))


@router.delete(
    "/portfolio/{domain:domain}", status_code=204, response_class=Response, responses=ENTRY_ERRORS
)
def remove(domain: DomainPath, api: Services) -> Response:
    """Delete an entry and its history (use the ledger, `dominus portfolio sold|drop`, to close
    a name instead)."""
    _service(api).remove(domain)
    return Response(status_code=204)
