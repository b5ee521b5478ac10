"""/login and /logout (only with DOMINUS_API_TOKEN set; without it there is nothing to log
into and /login says so). Logging out ends the session on the server (sessions.py).

The form takes the API token (a session that may act) or the read-only token (a session that
may only look, ADR 0055); the metrics token opens nothing here."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from dominus.api.security import Access, accesses, token_access
from dominus.api.services import services
from dominus.api.token_throttle import client_address
from dominus.web.context import Web
from dominus.web.guard import LOGIN_PATH, LOGOUT_PATH, page_auth_of
from dominus.web.routes.forms import first, form_fields, notice_text, see_other
from dominus.web.sessions import (
    LOGIN_COOKIE,
    LOGIN_FORM_SECONDS,
    READ_SESSION,
    SESSION,
    SESSION_COOKIE,
    SESSION_SECONDS,
    cookie_header,
)

router = APIRouter()


def _safe_next(target: str) -> str:
    """Only a path on this site (never `//host` or a scheme): no open redirect."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _login_form(
    request: Request, web: Web, next_path: str, *, error: str | None = None, status_code: int = 200
) -> Response:
    secure = request.url.scheme == "https"
    login = web.keys.issue("login", int(time.time()))
    session = web.keys.verify("login", login, int(time.time()), LOGIN_FORM_SECONDS)
    response = web.pages.render(
        request,
        "login.html",
        status_code=status_code,
        title="Log in",
        next_path=next_path,
        error=error,
        notice=notice_text(request),
        login_required=web.keys.login_required,
        login_csrf=web.keys.csrf_token(session, "login"),
    )
    response.headers.append(
        "Set-Cookie", cookie_header(LOGIN_COOKIE, login, max_age=LOGIN_FORM_SECONDS, secure=secure)
    )
    return response


@router.get(LOGIN_PATH)
def login_form(
    request: Request, web: Web, next: Annotated[str, Query(max_length=2000)] = "/"
) -> Response:
    return _login_form(request, web, _safe_next(next))


# Both read or write the session generation: `services` first checks that the database holds
# this code's schema (a 503 `not_migrated` otherwise), as every page's route does.
@router.post(LOGIN_PATH, dependencies=[Depends(services)])
async def login(request: Request, web: Web) -> Response:
    fields = await form_fields(request)
    next_path = _safe_next(first(fields, "next", "/"))
    if web.tokens is None:
        return see_other(next_path)
    # Counted with the API's bearer checks (token_throttle.py): a guesser gains nothing by
    # switching between the two.
    address = client_address(request.scope)
    wait = web.throttle.retry_after(address)
    if wait is not None:
        error = f"Too many wrong tokens from this address: try again in {wait} s."
        response = _login_form(request, web, next_path, error=error, status_code=429)
        response.headers["Retry-After"] = str(wait)
        return response
    given = first(fields, "token")
    access = token_access(given.encode("utf-8"), accesses(web.tokens))
    if access is None:
        if given:  # an empty form is not a guess (token_throttle.py)
            web.throttle.failed(address, LOGIN_PATH)
        return _login_form(
            request, web, next_path, error="That is not the API token.", status_code=401
        )
    web.throttle.succeeded(address)
    if access is Access.METRICS:
        error = "That is the metrics token: it reads /api/v1/metrics only, not these pages."
        return _login_form(request, web, next_path, error=error, status_code=403)
    secure = request.url.scheme == "https"
    generation = await run_in_threadpool(web.generations.current)
    purpose = READ_SESSION if access is Access.READ else SESSION
    session = web.keys.issue(purpose, int(time.time()), generation)
    response = see_other(next_path)
    response.headers.append(
        "Set-Cookie", cookie_header(SESSION_COOKIE, session, max_age=SESSION_SECONDS, secure=secure)
    )
    response.headers.append("Set-Cookie", cookie_header(LOGIN_COOKIE, "", max_age=0, secure=secure))
    return response


@router.post(LOGOUT_PATH, dependencies=[Depends(services)])
def logout(request: Request, web: Web) -> Response:
    """Ends the session on the server, not only in this browser: the session generation moves
    on, so this cookie (and every other of the token, wherever it was copied) is refused from
    now on (sessions.py). A read-only session only forgets its cookie: moving the generation
    would end the operator's sessions too, which a token that changes nothing may not do."""
    auth = page_auth_of(request)
    if web.tokens is not None and not (auth is not None and auth.read_only):
        web.generations.advance()
    secure = request.url.scheme == "https"
    response = see_other(LOGIN_PATH, "logged-out")
    response.headers.append(
        "Set-Cookie", cookie_header(SESSION_COOKIE, "", max_age=0, secure=secure)
    )
    return response
