"""/portfolio/import: a registrar's or marketplace's CSV export imported from the browser, in
two steps. The upload shows the dry run (`dominus portfolio import --dry-run`): each row with
what would happen to it, which column fed which field, and every invalid row with its line;
nothing is written. **Import** posts the same file back and imports it with the same options
(the portfolio importer `portfolio import` uses), then enqueues PORTFOLIO_RESCORE for the
portfolio when the file added or changed a name.

The file is read in memory from the posted body, never stored and never named by the person
(no path is taken from the form). Between the two steps it travels in the confirm form, base64
encoded, so the server keeps no state; its size is capped so that both posts fit the request
body limit (DOMINUS_MAX_BODY_BYTES)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import date
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from dominus.api.multipart import MultipartForm, UnreadableMultipartError, parse_in_thread
from dominus.api.services import ApiServices, Services
from dominus.portfolio.csv_import import (
    ImportOptions,
    PortfolioImporter,
    decode,
    parse_mapping,
)
from dominus.portfolio.import_preview import ImportPreview, PreviewRow, preview_import
from dominus.portfolio.model import PortfolioInputError
from dominus.portfolio.presets import FIELDS, PRESETS
from dominus.portfolio.service import PortfolioService
from dominus.web.context import Dashboard, Web
from dominus.web.routes.forms import see_other
from dominus.web.routes.portfolio import enqueue_rescore

router = APIRouter()
MAX_UPLOAD_BYTES = 512 * 1024
# What a multipart post holds besides the file: its boundaries, part headers and the options.
FORM_OVERHEAD_BYTES = 8 * 1024
OPTION_LIMITS = {"preset": 40, "date_format": 40, "map": 2000}


@dataclass(frozen=True)
class ImportForm:
    """The options as the form sent them (shown again as typed)."""

    preset: str = ""
    date_format: str = ""
    map: str = ""
    decimal_comma: bool = False
    skip_invalid: bool = False

    @classmethod
    def of(cls, form: MultipartForm) -> ImportForm:
        texts = {name: form.first(name).strip()[:limit] for name, limit in OPTION_LIMITS.items()}
        return cls(
            **texts,
            decimal_comma=form.first("decimal_comma") == "yes",
            skip_invalid=form.first("skip_invalid") == "yes",
        )

    def options(self) -> ImportOptions:
        """The importer's options; PortfolioInputError for an unknown preset or a bad map."""
        if self.preset and self.preset not in PRESETS:
            raise PortfolioInputError(f"unknown preset {self.preset!r}")
        return ImportOptions(
            preset=self.preset or None,
            mapping=parse_mapping(self.map) if self.map else {},
            date_format=self.date_format or None,
            decimal_comma=self.decimal_comma,
            skip_invalid=self.skip_invalid,
        )


def upload_limit(api: ApiServices) -> int:
    """The largest file taken: the confirm post carries it base64 encoded (4 bytes for 3), and
    it must still fit the body limit."""
    body_limit = api.runtime.settings.DOMINUS_MAX_BODY_BYTES
    return max(0, min(MAX_UPLOAD_BYTES, (body_limit - FORM_OVERHEAD_BYTES) * 3 // 4))


def _importer(api: ApiServices) -> PortfolioImporter:
    return PortfolioImporter(PortfolioService(api.runtime.engine, api.runtime.settings))


def _page(
    request: Request,
    api: ApiServices,
    web: Dashboard,
    *,
    form: ImportForm | None = None,
    error: str | None = None,
    preview: ImportPreview | None = None,
    data: bytes = b"",
    filename: str = "",
    status_code: int = 200,
) -> Response:
    form = form or ImportForm()
    return web.pages.render(
        request,
        "portfolio_import.html",
        status_code=status_code,
        title="Import a CSV file",
        form=form,
        presets=sorted(PRESETS),
        fields=FIELDS,
        error=error,
        limit=upload_limit(api),
        preview=preview,
        rows=[] if preview is None else [_cells(row, preview) for row in preview.rows],
        can_import=preview is not None
        and preview.writes > 0
        and (form.skip_invalid or not preview.report.refused),
        filename=filename,
        file_b64=base64.b64encode(data).decode("ascii") if preview is not None else "",
    )


async def _read_form(
    request: Request, api: ApiServices, web: Dashboard
) -> MultipartForm | Response:
    """The upload form posted, or the page that says why it cannot be read."""
    try:
        form = await parse_in_thread(request.headers.get("content-type", ""), await request.body())
    except UnreadableMultipartError as error:
        return _page(request, api, web, error=str(error), status_code=400)
    if form is None:
        return _page(request, api, web, error="send the file from the form", status_code=415)
    return form


def _cells(row: PreviewRow, preview: ImportPreview) -> dict[str, Any]:
    """A preview row as the table shows it: one cell per field the file has a column for."""
    values = {name: _shown(row.values.get(name)) for name in preview.columns if name != "currency"}
    return {
        "line": row.line,
        "domain": row.domain,
        "action": row.action,
        "values": values,
        "changes": set(row.changes),
        "reason": row.reason,
    }


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


@router.get("/portfolio/import")
def import_form(request: Request, api: Services, web: Web) -> Response:
    return _page(request, api, web)


@router.post("/portfolio/import")
async def preview(request: Request, api: Services, web: Web) -> Response:
    """The uploaded file's dry run: nothing is written."""
    form = await _read_form(request, api, web)
    if isinstance(form, Response):
        return form
    choices = ImportForm.of(form)
    upload = form.files.get("file")
    if upload is None or not upload.data:
        return _page(request, api, web, form=choices, error="choose a CSV file", status_code=422)
    limit = upload_limit(api)
    if len(upload.data) > limit:
        message = f"the file is over {limit:,} bytes: import it with `dominus portfolio import`"
        return _page(request, api, web, form=choices, error=message, status_code=413)

    def dry_run() -> Response:
        try:
            found = preview_import(
                _importer(api), decode(upload.data), choices.options(), api.now()
            )
        except PortfolioInputError as error:
            return _page(request, api, web, form=choices, error=error.message, status_code=422)
        return _page(
            request,
            api,
            web,
            form=choices,
            preview=found,
            data=upload.data,
            filename=upload.filename,
        )

    return await run_in_threadpool(dry_run)


@router.post("/portfolio/import/confirm")
async def confirm(request: Request, api: Services, web: Web) -> Response:
    """Import the file the preview showed, with its options; then enqueue a rescore of the
    portfolio if the file added or changed a name."""
    form = await _read_form(request, api, web)
    if isinstance(form, Response):
        return form
    choices = ImportForm.of(form)
    try:
        data = base64.b64decode(form.first("file_b64"), validate=True)
    except (binascii.Error, ValueError):
        data = b""
    if not data or len(data) > upload_limit(api):
        message = "the file did not come back from the preview: upload it again"
        return _page(request, api, web, form=choices, error=message, status_code=422)

    def run() -> Response:
        try:
            report = _importer(api).run(decode(data), choices.options(), api.now())
        except PortfolioInputError as error:
            return _page(request, api, web, form=choices, error=error.message, status_code=422)
        if not (report.added or report.updated):
            return see_other("/portfolio", "imported-unchanged")
        queued = enqueue_rescore(api, None)
        return see_other("/portfolio", "imported", job=queued.job_id)

    return await run_in_threadpool(run)
