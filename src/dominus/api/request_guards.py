"""Guards against the browser on the user's own machine: cross-site requests and DNS rebinding.

By default the API listens on loopback without a token, so what protects it is that only local
programs can reach it. A web page the user visits is such a program, through the browser:

- **DNS rebinding.** A page at `http://attacker.example:8000` has its name re-resolved to
  127.0.0.1 and then reads the API as its own origin. The browser still sends `Host:
  attacker.example:8000`, so a request is answered only when `Host` names this server:
  `localhost` or a loopback address, the address `serve` is bound to (any IP address when bound
  to every interface: a rebinding page always has a name), or an entry of
  `DOMINUS_ALLOWED_HOSTS`. Otherwise 421 Misdirected Request.
- **Cross-site requests.** Any page may send a "simple" request to another site without asking:
  a form, or a `fetch` whose body is text, a form or a blob without a type, and no custom
  header; it cannot read the answer, but a cancel or a requeue needs no answer. So every
  mutating request (POST, PUT, PATCH, DELETE) under the API must carry `Content-Type:
  application/json` or, when it has no body, an `X-Requested-By` header (any value): a browser
  sends neither cross-site without a CORS preflight, and this server never answers a preflight
  permissively (it sends no CORS headers at all). A CSV upload may also come as `text/csv` (not a
  type a page can send cross-site without a preflight) or as a multipart form with that header.
  Otherwise 415.
- **Origin**, as a second line: a mutating request that a browser says comes from a page on a
  host this server does not answer to is refused (403), whatever its headers. This one applies
  to the dashboard's pages too (ADR 0023), whose forms also carry a CSRF token.

It is an ASGI middleware, outermost, so that it runs before the token check and before any body
is read, like `BearerTokenMiddleware`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Receive, Scope, Send

from dominus.api.errors import error_response
from dominus.errors import ConfigurationError
from dominus.host_names import (
    HostPort,
    canonical_host,
    is_ip_address,
    is_loopback,
    is_unspecified,
    parse_host,
    parse_host_list,
)

MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
REQUESTED_BY_HEADER = "X-Requested-By"
JSON_MEDIA_TYPE = "application/json"
CSV_MEDIA_TYPE = "text/csv"
MULTIPART_MEDIA_TYPE = "multipart/form-data"
MEDIA_TYPE_MESSAGE = (
    "send the body as JSON with `Content-Type: application/json`; a request without a body "
    "needs that header or an `X-Requested-By` header (any value)"
)
_SHOWN_CHARS = 100  # of a refused Host or Origin, in the message


@dataclass(frozen=True)
class HostAllowList:
    """The hosts this server answers to (see the module's docstring)."""

    bind_host: str | None
    allowed: tuple[HostPort, ...]

    @classmethod
    def build(cls, bind_host: str | None, allowed_hosts: str) -> HostAllowList:
        try:
            bound = canonical_host(bind_host) if bind_host is not None else None
        except ValueError as error:
            raise ConfigurationError(f"--host {bind_host!r}: {error}") from None
        return cls(bound, parse_host_list(allowed_hosts))

    def allows(self, requested: HostPort) -> bool:
        if is_loopback(requested.host):
            return True
        if self.bind_host is not None:
            if requested.host == self.bind_host:
                return True
            if is_unspecified(self.bind_host) and is_ip_address(requested.host):
                return True
        # An entry with a port matches only that port; one without, any port.
        return any(
            entry.host == requested.host and entry.port in (None, requested.port)
            for entry in self.allowed
        )

    def allows_text(self, host: str) -> bool:
        try:
            return self.allows(parse_host(host))
        except ValueError:
            return False

    def allows_origin(self, origin: str) -> bool:
        """`Origin: scheme://host[:port]` names a host this server answers to (`null`, sent by
        sandboxed and file pages, does not)."""
        scheme, separator, host = origin.partition("://")
        return scheme.lower() in ("http", "https") and bool(separator) and self.allows_text(host)


class RequestGuardMiddleware:
    """Refuses, before anything else runs: a request for another host (421); a mutating request
    from another site's page (403); under `prefix`, a mutating request without the JSON
    content type or the custom header (415)."""

    def __init__(self, app: ASGIApp, *, hosts: HostAllowList, prefix: str) -> None:
        self.app = app
        self.hosts = hosts
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self.hosts.allows_text(host):
            return error_response(
                421,
                "misdirected_request",
                f"this server does not answer to the host `{host[:_SHOWN_CHARS]}`: use its "
                "address, or add the name to DOMINUS_ALLOWED_HOSTS",
            )
        if scope["method"] not in MUTATING_METHODS or not self._reaches_an_endpoint(scope):
            return None
        origin = headers.get("origin")
        if origin is not None and not self.hosts.allows_origin(origin):
            return error_response(
                403,
                "forbidden_origin",
                f"changes are not taken from a web page at `{origin[:_SHOWN_CHARS]}`",
            )
        # The dashboard's pages post forms; their CSRF token is checked by the dashboard's own
        # gate (ADR 0023). The API takes only what a cross-site page cannot send.
        if self._under_prefix(scope["path"]) and not acceptable_body(headers):
            return error_response(415, "unsupported_media_type", MEDIA_TYPE_MESSAGE)
        return None

    def _under_prefix(self, path: str) -> bool:
        return path == self.prefix or path.startswith(self.prefix + "/")

    def _reaches_an_endpoint(self, scope: Scope) -> bool:
        """Routed to an endpoint (of the API or a dashboard page): a method or path the app
        does not have changes nothing, and keeps its 405 or 404 (with the `Allow` list) from
        the router."""
        router = getattr(scope.get("app"), "router", None)
        if router is None:  # not under a Starlette app: guard everything
            return True
        return any(route.matches(scope)[0] == Match.FULL for route in router.routes)


def acceptable_body(headers: Headers) -> bool:
    """JSON, or no body at all and the custom header; for CSV uploads (the portfolio import),
    `text/csv` (not a type a page may send cross-site without a preflight) or a multipart form
    with the custom header (a form alone is a simple request, the header is not)."""
    media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type in (JSON_MEDIA_TYPE, CSV_MEDIA_TYPE):
        return True
    if media_type == MULTIPART_MEDIA_TYPE:
        return bool(headers.get(REQUESTED_BY_HEADER, "").strip())
    has_body = headers.get("content-length", "0").strip() != "0" or "transfer-encoding" in headers
    return not has_body and bool(headers.get(REQUESTED_BY_HEADER, "").strip())


def document_request_guards(document: dict[str, Any]) -> dict[str, Any]:
    """The guards' answers in the OpenAPI document, and the custom header as a parameter of each
    mutating operation without a body, so a client (or a fuzzer) following it is never
    refused."""
    for operations in document.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            responses.setdefault("421", _error("The Host header names another server."))
            if method.upper() not in MUTATING_METHODS:
                continue
            responses.setdefault("403", _error("Sent from a web page on another host."))
            responses.setdefault("415", _error("Not JSON, or no body and no X-Requested-By."))
            if "requestBody" not in operation:
                operation.setdefault("parameters", []).append(dict(_REQUESTED_BY_PARAMETER))
    return document


_REQUESTED_BY_PARAMETER = {
    "name": REQUESTED_BY_HEADER,
    "in": "header",
    "required": True,
    "description": "Any value (or send `Content-Type: application/json`): a web page on "
    "another site cannot send it without the server's consent, which it never gives.",
    "schema": {"type": "string", "pattern": r"\S"},
}


def _error(description: str) -> dict[str, Any]:
    schema = {"$ref": "#/components/schemas/ErrorBody"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}
