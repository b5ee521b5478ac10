"""One error shape for every failure: `{"error": {"code": "...", "message": "..."}}`.

Bad input is always a 4xx: DOMINUS's own errors map to the status that fits, request validation
is 422, an unknown route 404. Only a genuine server fault is a 5xx (and a database that is down
or busy is 503 with Retry-After)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from dominus.errors import (
    ConflictError,
    DatabaseError,
    DominusError,
    InvalidInputError,
    NotFoundError,
    QueueFullError,
)

log = logging.getLogger("dominus.api")

QUEUE_FULL_RETRY_AFTER_SECONDS = 5
BUSY_RETRY_AFTER_SECONDS = 1

# Each kind of error and its status, most specific first; the code is the error's own
# (`DominusError.code`: `not_found`, `invalid_payload`, `database_busy` ...).
STATUS_OF: list[tuple[type[DominusError], int]] = [
    (NotFoundError, 404),
    (ConflictError, 409),
    (QueueFullError, 429),
    (InvalidInputError, 422),
    (DatabaseError, 503),
]
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    415: "unsupported_media_type",
}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(DominusError, _dominus_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]


async def _dominus_error(_request: Request, error: DominusError) -> JSONResponse:
    status = next((status for kind, status in STATUS_OF if isinstance(error, kind)), 400)
    headers = None
    if isinstance(error, QueueFullError):
        headers = {"Retry-After": str(QUEUE_FULL_RETRY_AFTER_SECONDS)}
    elif status == 503:
        headers = {"Retry-After": str(BUSY_RETRY_AFTER_SECONDS)}
        # The driver's text (in `str(error)`) is for the operator's log only: it can name
        # hosts, users and paths. The client gets the message, in DOMINUS's words.
        log.warning("%s", error)
    return error_response(status, error.code, error.message, headers)


async def _validation_error(_request: Request, error: RequestValidationError) -> JSONResponse:
    problems = []
    for issue in error.errors():
        if issue.get("type") == "json_invalid":
            found = (issue.get("ctx") or {}).get("error", "cannot be read")
            at = issue.get("loc", ())[-1:]
            problems.append(f"the request body is not JSON: {found} (at character {at[0]})")
            continue
        where = ".".join(str(part) for part in issue.get("loc", ()) if _is_place(part))
        problems.append(f"{where or 'request'}: {_in_words(issue)}")
    return error_response(422, "invalid_request", "; ".join(problems) or "invalid request")


def _is_place(part: object) -> bool:
    """A field name or a list position; not "body", nor a union member's tag that pydantic
    puts in the path ("constrained-str", a model's class name)."""
    if isinstance(part, int):
        return True
    text = str(part)
    return text != "body" and "-" not in text and not text[:1].isupper()


def _in_words(issue: Any) -> str:
    """Pydantic's message, except where it would show a regular expression holding a NUL."""
    pattern = str((issue.get("ctx") or {}).get("pattern", ""))
    if issue.get("type") == "string_pattern_mismatch" and "\x00" in pattern:
        return "holds a NUL character, which cannot be stored"
    return str(issue.get("msg", "invalid"))


async def _http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
    code = _HTTP_CODES.get(error.status_code, "error")
    headers = dict(error.headers) if error.headers else {}
    if error.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    return error_response(error.status_code, code, str(error.detail), headers or None)


def allowed_methods(request: Request) -> list[str]:
    """Every method the path supports. Starlette's own `Allow` names only the first route whose
    path matched, and GET /dlq and DELETE /dlq are two routes. Asking each route whether it would
    take the request with each method relies on the public `matches` alone. A path the schema
    names word for word (`/jobs/bulk`) answers with the methods the schema lists for it, even
    where another route's template would also read it (`/jobs/{job_id}`)."""
    documented = _documented_methods(request)
    if documented:
        return documented
    allowed = []
    for method in _METHODS:
        scope = dict(request.scope) | {"method": method}
        if any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return allowed


def _documented_methods(request: Request) -> list[str]:
    openapi = getattr(request.app, "openapi", None)
    if openapi is None:
        return []
    item = openapi().get("paths", {}).get(request.url.path, {})
    return [method for method in _METHODS if method.lower() in item]
