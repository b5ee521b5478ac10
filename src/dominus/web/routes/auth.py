"""/login and /logout (only with DOMINUS_API_TOKEN set; without it there is nothing to log
into and /login says so). Logging out ends the session on the server (sessions.py)."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from dominus.api.services import services
from dominus.api.token_throttle import client_address
from dominus.web.context import Web
from dominus.web.guard import LOGIN_PATH
from dominus.web.routes.forms import first, form_fields, notice_text, see_other
from dominus.web.sessions import (
    LOGIN_COOKIE,
    LOGIN_FORM_SECONDS,
    SESSION_COOKIE,
    SESSION_SECONDS,
    cookie_header,
    token_matches,
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
    if web.token is None:
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
    if not token_matches(given, web.token):
        if given:  # an empty form is not a guess (token_throttle.py)
            web.throttle.failed(address, LOGIN_PATH)
        return _login_form(
            request, web, next_path, error="That is not the API token.", status_code=401
        )
    web.throttle.succeeded(address)
    secure = request.url.scheme == "https"
    generation = await run_in_threadpool(web.generations.current)
    session = web.keys.issue("session", int(time.time()), generation)
    response = see_other(next_path)
    response.headers.append(
        "Set-Cookie", cookie_header(SESSION_COOKIE, session, max_age=SESSION_SECONDS, secure=secure)
    )
    response.headers.append("Set-Cookie", cookie_header(LOGIN_COOKIE, "", max_age=0, secure=secure))
    return response


@router.post("/logout", dependencies=[Depends(services)])
def logout(request: Request, web: Web) -> Response:
    """Ends the session on the server, not only in this browser: the session generation moves
    on, so this cookie (and every other of the token, wherever it was copied) is refused from
    now on (sessions.py)."""
    if web.token is not None:
        web.generations.advance()
    secure = request.url.scheme == "https"
    response = see_other(LOGIN_PATH, "logged-out")
    response.headers.append(
        "Set-Cookie", cookie_header(SESSION_COOKIE, "", max_age=0, secure=secure)
    )
    return response
