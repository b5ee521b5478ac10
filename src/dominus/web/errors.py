"""Errors on pages are pages: the API's handlers decide the status and the message (one
mapping for both), and a page request gets them as HTML with a way back."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from dominus.errors import DominusError
from dominus.web.rendering import Pages

Handler = Callable[[Request, Any], Response | Awaitable[Response]]


def install_page_errors(app: FastAPI, api_prefix: str) -> None:
    for kind in (DominusError, RequestValidationError, StarletteHTTPException):
        api_handler = app.exception_handlers[kind]
        app.add_exception_handler(kind, _page_or_api(api_handler, api_prefix))


def _page_or_api(api_handler: Handler, api_prefix: str) -> Handler:
    async def handle(request: Request, error: Any) -> Response:
        answer = api_handler(request, error)
        response = await answer if inspect.isawaitable(answer) else answer
        path = request.url.path
        if path == api_prefix or path.startswith(api_prefix + "/"):
            return response
        return error_page(request, response)

    return handle


def error_page(request: Request, api_response: Response) -> Response:
    body = json.loads(bytes(api_response.body))
    error = body.get("error", {})
    pages: Pages = request.app.state.dashboard.pages
    page = pages.render(
        request,
        "error.html",
        status_code=api_response.status_code,
        title=f"Error {api_response.status_code}",
        status=api_response.status_code,
        code=error.get("code", "error"),
        message=error.get("message", ""),
    )
    for name in ("Retry-After", "Allow"):
        if name in api_response.headers:
            page.headers[name] = api_response.headers[name]
    return page
