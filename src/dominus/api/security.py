"""Bearer-token authentication for /api/v1 (when DOMINUS_API_TOKEN is set).

Three tokens may be set, each with its own powers (ADR 0055): DOMINUS_API_TOKEN may do
everything; DOMINUS_API_READ_TOKEN reads (GET, HEAD) every path and changes nothing;
DOMINUS_API_METRICS_TOKEN reads /api/v1/metrics only. A known token asking for more than its
powers is a 403 whose message says why, logged at WARNING with the client's address.

It is an ASGI middleware rather than a route dependency so that it runs before anything else
looks at the request: FastAPI parses and validates a body before it resolves dependencies, so a
dependency would let an unauthenticated client learn from 422s (or 404s and 405s) what the API
accepts. Here every request under the prefix without the token is a 401, whatever it asks for.

Wrong tokens are counted per client address (token_throttle.py): after a few, the address must
wait before each further try, and a try that does not wait is a 429 before its token is read.

Tokens are compared as bytes: the token's UTF-8 encoding against the header's raw bytes, as
they arrived. Decoding the header first (ASGI servers hand it over undecoded) would have to
guess an encoding, and a non-ASCII token could then never match.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Sequence
from enum import StrEnum

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dominus.api.errors import error_response
from dominus.api.token_throttle import TokenThrottle, client_address
from dominus.config import ApiTokens

log = logging.getLogger("dominus.api")

UNAUTHORIZED_MESSAGE = "a valid `Authorization: Bearer <token>` header is required"
TOO_MANY_MESSAGE = "too many wrong tokens from this address: try again in {seconds} s"
# On a non-loopback address the token is all that stands between the network and the API.
MIN_PUBLIC_TOKEN_LENGTH = 16
# What a read-only token may send: the methods that change nothing.
READ_METHODS = frozenset({"GET", "HEAD"})


class Access(StrEnum):
    """What a token may do."""

    FULL = "full"
    READ = "read"
    METRICS = "metrics"


def accesses(tokens: ApiTokens) -> list[tuple[bytes, Access]]:
    """Each token set, as the bytes a header must carry, with its powers."""
    pairs = [(tokens.full, Access.FULL), (tokens.read, Access.READ)]
    pairs.append((tokens.metrics, Access.METRICS))
    return [(token.encode("utf-8"), access) for token, access in pairs if token is not None]


def token_access(given: bytes, known: Sequence[tuple[bytes, Access]]) -> Access | None:
    """The powers of token `given`, or None. Each token is compared in constant time, and every
    one whichever matches, so the time taken does not tell which one was nearly right. An empty
    token (refused by the settings) would match an empty `given`: it matches nothing instead."""
    found = None
    for expected, access in known:
        matched = hmac.compare_digest(given, expected)
        if matched and expected and found is None:
            found = access
    return found


def header_access(header: bytes, known: Sequence[tuple[bytes, Access]]) -> Access | None:
    """The powers of the token in `header`, `Bearer <token>` (scheme case-insensitive)."""
    scheme, _, given = header.partition(b" ")
    # The tokens are compared whatever the scheme, so a wrong scheme costs the same time.
    access = token_access(given.strip(b" \t"), known)
    return access if scheme.lower() == b"bearer" else None


def beyond_powers(access: Access, method: str, path: str, metrics_path: str) -> str | None:
    """Why a request is more than `access` may do (one line), or None when it may."""
    if access is Access.FULL:
        return None
    if access is Access.READ:
        if method in READ_METHODS:
            return None
        return f"this token is read-only: {method} changes something and needs DOMINUS_API_TOKEN"
    if method in READ_METHODS and path == metrics_path:
        return None
    return f"this token reads {metrics_path} only"


def is_a_guess(header: bytes) -> bool:
    """`Bearer <something>`: a header that would have let the request in had `something` been
    the token. Anything else (no header, another scheme, nothing after `Bearer`) cannot match
    whatever the token is, so it is refused without counting as a guess: a client that lost
    its token, or sends it wrongly, neither fills the log nor locks its address out."""
    scheme, _, given = header.partition(b" ")
    return scheme.lower() == b"bearer" and bool(given.strip(b" \t"))


class BearerTokenMiddleware:
    """Answers 401 to every HTTP request under `prefix` (except `public_paths`) that does not
    carry a token, and 403 to one whose token may not do what it asks."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        tokens: ApiTokens,
        prefix: str,
        public_paths: frozenset[str],
        throttle: TokenThrottle,
        public_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.known = accesses(tokens)
        self.metrics_path = f"{prefix}/metrics"
        self.prefix = prefix
        self.public_paths = public_paths
        self.public_prefixes = public_prefixes
        self.throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._guarded(scope["path"]):
            refusal = self.refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> Response | None:
        """None when the request carries a token that may do what it asks; else the 429, 401
        or 403 to answer."""
        address = client_address(scope)
        wait = self.throttle.retry_after(address)
        if wait is not None:
            message = TOO_MANY_MESSAGE.format(seconds=wait)
            return error_response(429, "too_many_attempts", message, {"Retry-After": str(wait)})
        header = _header(scope, b"authorization")
        access = header_access(header, self.known)
        if access is not None:
            self.throttle.succeeded(address)
            return self._beyond_powers(scope, access, address)
        if is_a_guess(header):
            self.throttle.failed(address, scope["path"][:200])
        return error_response(
            401, "unauthorized", UNAUTHORIZED_MESSAGE, {"WWW-Authenticate": "Bearer"}
        )

    def _beyond_powers(self, scope: Scope, access: Access, address: str) -> Response | None:
        method, path = scope["method"], scope["path"]
        reason = beyond_powers(access, method, path, self.metrics_path)
        if reason is None:
            return None
        log.warning("%s API token refused from %s on %s %r", access, address, method, path[:200])
        return error_response(403, "forbidden", reason)

    def _guarded(self, path: str) -> bool:
        under_prefix = path == self.prefix or path.startswith(self.prefix + "/")
        public = path in self.public_paths or path.startswith(self.public_prefixes)
        return under_prefix and not public


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return b""
