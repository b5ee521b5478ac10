"""Bearer-token authentication for /api/v1 (when DOMINUS_API_TOKEN is set).

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

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from dominus.api.errors import error_response
from dominus.api.token_throttle import TokenThrottle, client_address

UNAUTHORIZED_MESSAGE = "a valid `Authorization: Bearer <token>` header is required"
TOO_MANY_MESSAGE = "too many wrong tokens from this address: try again in {seconds} s"
# On a non-loopback address the token is all that stands between the network and the API.
MIN_PUBLIC_TOKEN_LENGTH = 16


def bearer_token_matches(header: bytes, expected: bytes) -> bool:
    """`header` is `Bearer <expected>` (scheme case-insensitive), compared in constant time."""
    scheme, _, given = header.partition(b" ")
    # compare_digest runs whatever the scheme, so a wrong scheme costs the same time. An empty
    # expected token (refused by the settings) would match `Bearer`: it matches nothing instead.
    matches = hmac.compare_digest(given.strip(b" \t"), expected)
    return bool(expected) and scheme.lower() == b"bearer" and matches


def is_a_guess(header: bytes) -> bool:
    """`Bearer <something>`: a header that would have let the request in had `something` been
    the token. Anything else (no header, another scheme, nothing after `Bearer`) cannot match
    whatever the token is, so it is refused without counting as a guess: a client that lost
    its token, or sends it wrongly, neither fills the log nor locks its address out."""
    scheme, _, given = header.partition(b" ")
    return scheme.lower() == b"bearer" and bool(given.strip(b" \t"))


class BearerTokenMiddleware:
    """Answers 401 to every HTTP request under `prefix` (except `public_paths`) that does not
    carry the token."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        prefix: str,
        public_paths: frozenset[str],
        throttle: TokenThrottle,
    ) -> None:
        self.app = app
        self.expected = token.encode("utf-8")
        self.prefix = prefix
        self.public_paths = public_paths
        self.throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._guarded(scope["path"]):
            refusal = self.refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> Response | None:
        """None when the request carries the token; else the 429 or 401 to answer."""
        address = client_address(scope)
        wait = self.throttle.retry_after(address)
        if wait is not None:
            message = TOO_MANY_MESSAGE.format(seconds=wait)
            return error_response(429, "too_many_attempts", message, {"Retry-After": str(wait)})
        header = _header(scope, b"authorization")
        if bearer_token_matches(header, self.expected):
            self.throttle.succeeded(address)
            return None
        if is_a_guess(header):
            self.throttle.failed(address, scope["path"][:200])
        return error_response(
            401, "unauthorized", UNAUTHORIZED_MESSAGE, {"WWW-Authenticate": "Bearer"}
        )

    def _guarded(self, path: str) -> bool:
        under_prefix = path == self.prefix or path.startswith(self.prefix + "/")
        return under_prefix and path not in self.public_paths


def _header(scope: Scope, name: bytes) -> bytes:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return b""
