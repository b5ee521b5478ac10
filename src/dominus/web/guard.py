"""The dashboard's gate: every page request passes here, inside the request guards (host and
origin, ADR 0008) and the body limit, and outside the routes (ADR 0023).

- With DOMINUS_API_TOKEN set, a page needs a valid session cookie, of the current session
  generation (read from the database: logging out anywhere ends it here too): a GET without one
  is sent to the login form (303), any other method is a 401.
- A session opened with the read-only token (ADR 0055) may look at every page but do nothing:
  any other method than GET/HEAD/OPTIONS (but logging out) is a 403, logged at WARNING with the
  client's address.
- Every POST must carry the CSRF token of its session (form field `csrf_token`, of a
  url-encoded or a multipart form, or header `X-CSRF-Token`); without it, or with another,
  it is a 403 and nothing runs.

/api/v1 is not handled here: it keeps its bearer token, and a cookie never authenticates it
(the dashboard makes no /api/v1 call of its own). Static files are public.
"""

from __future__ import annotations

import hmac
import inspect
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, quote

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dominus.api.limits import replayed
from dominus.api.multipart import (
    MULTIPART,
    UnreadableMultipartError,
    media_type,
    parse_in_thread,
)
from dominus.api.token_throttle import client_address
from dominus.errors import DominusError
from dominus.web.sessions import (
    CSRF_FIELD,
    CSRF_HEADER,
    LOGIN_COOKIE,
    LOGIN_FORM_SECONDS,
    READ_SESSION,
    SESSION,
    SESSION_COOKIE,
    SESSION_SECONDS,
    Session,
    SessionKeys,
)

log = logging.getLogger("dominus.web")

LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
STATIC_PREFIX = "/static/"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"
MAX_FORM_FIELDS = 2_000  # twice what the biggest form (1,000 ticked jobs and its filters) posts
CSRF_REFUSED = (
    "refused: this form's security (CSRF) token is missing or out of date. Reload the page and "
    "try again."
)
READ_ONLY_REFUSED = (
    "refused: you logged in with the read-only token, which can look but not act. Log in with "
    "the API token to act."
)


@dataclass(frozen=True)
class PageAuth:
    """What a page's request carries, for the routes: its session (None without login) and the
    CSRF token its forms must send."""

    session: Session | None
    csrf_token: str
    login_required: bool

    @property
    def read_only(self) -> bool:
        """Opened with the read-only token: the pages hide their actions."""
        return self.session is not None and self.session.read_only


def page_auth_of(request: Request) -> PageAuth | None:
    """What the gate found on `request` (None on a request it did not see)."""
    auth: PageAuth | None = getattr(request.state, "page_auth", None)
    return auth


class DashboardGuardMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        keys: SessionKeys,
        api_prefix: str,
        current_generation: Callable[[], int],
    ) -> None:
        self.app = app
        self.keys = keys
        self.api_prefix = api_prefix
        self.current_generation = current_generation  # blocking: reads the database

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._is_page(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        cookies = _cookies(headers.get("cookie", ""))
        now = int(time.time())
        try:
            session = await self._session(cookies.get(SESSION_COOKIE), now)
        except DominusError as error:  # the database is down, busy or not migrated: a 503
            await (await _error_answer(scope, error))(scope, receive, send)
            return
        on_login_form = scope["path"] == LOGIN_PATH
        if on_login_form:
            login = self.keys.verify("login", cookies.get(LOGIN_COOKIE), now, LOGIN_FORM_SECONDS)
            expected_csrf = self.keys.csrf_token(login, "login") if login else ""
        else:
            expected_csrf = self.keys.csrf_token(session)
        if scope["method"] not in SAFE_METHODS:
            body, receive = await _buffered(receive)
            # A stranger's upload is never parsed: without a session the gate refuses it anyway
            reads_uploads = session is not None or not self.keys.login_required
            if not await _csrf_sent(headers, body, expected_csrf, reads_uploads):
                await PlainTextResponse(CSRF_REFUSED, status_code=403)(scope, receive, send)
                return
        if self.keys.login_required and session is None and not on_login_form:
            await _login_needed(scope)(scope, receive, send)
            return
        if session is not None and session.read_only and _acts(scope):
            address = client_address(scope)
            log.warning(
                "read-only session refused from %s on %s %r",
                address,
                scope["method"],
                scope["path"][:200],
            )
            await PlainTextResponse(READ_ONLY_REFUSED, status_code=403)(scope, receive, send)
            return
        scope.setdefault("state", {})["page_auth"] = PageAuth(
            session, expected_csrf, self.keys.login_required
        )
        await self.app(scope, receive, send)

    async def _session(self, cookie: str | None, now: int) -> Session | None:
        """The cookie's session if it is genuine, unexpired and of the current generation.
        The database is asked only for a genuine cookie: a stranger's costs it nothing."""
        if not self.keys.login_required:
            return None
        session = self.keys.verify(SESSION, cookie, now, SESSION_SECONDS)
        if session is None:
            session = self.keys.verify(READ_SESSION, cookie, now, SESSION_SECONDS)
        if session is None:
            return None
        current = await anyio.to_thread.run_sync(self.current_generation)
        return session if session.generation == current else None

    def _is_page(self, path: str) -> bool:
        under_api = path == self.api_prefix or path.startswith(self.api_prefix + "/")
        return not under_api and not path.startswith(STATIC_PREFIX)


def _acts(scope: Scope) -> bool:
    """The request would change something (logging out ends only the caller's session)."""
    return scope["method"] not in SAFE_METHODS and scope["path"] != LOGOUT_PATH


async def _error_answer(scope: Scope, error: DominusError) -> Response:
    """The app's own answer to `error` (its status, Retry-After and error page)."""
    handler = scope["app"].exception_handlers[DominusError]
    answer = handler(Request(scope), error)
    response: Response = await answer if inspect.isawaitable(answer) else answer
    return response


def _login_needed(scope: Scope) -> Response:
    if scope["method"] in ("GET", "HEAD"):
        target = scope["path"]
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        return RedirectResponse(f"{LOGIN_PATH}?next={quote(target, safe='')}", status_code=303)
    return PlainTextResponse("log in first: /login", status_code=401)


def _same(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def _cookies(header: str) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for part in header.split(";"):
        name, separator, value = part.strip().partition("=")
        if separator and name not in cookies:
            cookies[name] = value
    return cookies


async def _csrf_sent(headers: Headers, body: bytes, expected: str, reads_uploads: bool) -> bool:
    """Whether the request carries the expected CSRF token: htmx sends the header on every
    request; a plain form sends the field."""
    if not expected:
        return False
    if _same(headers.get(CSRF_HEADER, ""), expected):
        return True
    return _same(await _form_field(headers, body, reads_uploads), expected)


async def _form_field(headers: Headers, body: bytes, reads_uploads: bool) -> str:
    """The CSRF field of a url-encoded form or, from an upload form without JavaScript, of a
    multipart one (parsed off the event loop, and only when `reads_uploads`); "" if none."""
    content_type = headers.get("content-type", "")
    if media_type(content_type) == MULTIPART:
        if not reads_uploads:
            return ""
        try:
            form = await parse_in_thread(content_type, body)
        except UnreadableMultipartError:
            return ""
        return "" if form is None else form.first(CSRF_FIELD)
    if media_type(content_type) != FORM_MEDIA_TYPE:
        return ""
    try:
        fields = parse_qs(body.decode("utf-8", errors="replace"), max_num_fields=MAX_FORM_FIELDS)
    except ValueError:  # more fields than any form of ours has
        return ""
    values = fields.get(CSRF_FIELD, [])
    return values[0] if values else ""


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The whole body (the limits middleware has already capped its size) and a `receive` that
    hands it to the route again."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    return body, replayed(body, receive)
