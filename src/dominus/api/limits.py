"""Limits on what a request may send, checked before anything parses it.

- **Size.** A body over DOMINUS_MAX_BODY_BYTES is a 413 `payload_too_large`: at once when its
  Content-Length says so, otherwise (chunked) as soon as the bytes received pass the limit; the
  rest is never read, so no request holds more than the limit in memory.
- **Depth.** FastAPI parses a JSON body with Python's `json` before any of our code runs, and
  that parser recurses: a body nested ~1,000 levels deep ends as a RecursionError (FastAPI's own
  catch-all turns it into a vague 400), a few hundred levels get through it and recurse further
  down. A body nested more than MAX_JSON_DEPTH levels is a 422 `invalid_request`, found by a
  cheap scan of the raw bytes.

Both need the body before the app sees it, so this ASGI middleware reads it first and hands the
app the bytes it read.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dominus.api.errors import error_response
from dominus.jobs.json_limits import MAX_JSON_DEPTH, text_nests_deeper_than, too_deep_message


class BodyTooLargeError(Exception):
    """The body passed the limit (raised while reading it, never out of the middleware)."""


class RequestLimitsMiddleware:
    """Answers 413 `payload_too_large` to an HTTP request whose body is over `max_body_bytes`
    and 422 `invalid_request` to one whose body nests too deep."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._read_body(scope, receive)
        except BodyTooLargeError:
            message = (
                f"the request body is over the limit of {self.max_body_bytes:,} bytes "
                "(DOMINUS_MAX_BODY_BYTES)"
            )
            await error_response(413, "payload_too_large", message)(scope, receive, send)
            return
        if body is None:
            return  # the client went away before it finished sending
        if text_nests_deeper_than(body, MAX_JSON_DEPTH):
            response = error_response(422, "invalid_request", too_deep_message("the request body"))
            await response(scope, receive, send)
            return
        await self.app(scope, replayed(body, receive), send)

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole body; None if the client disconnected first. Raises BodyTooLargeError
        before reading a byte when Content-Length is over the limit, else as soon as what
        arrived is."""
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            raise BodyTooLargeError
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > self.max_body_bytes:
                raise BodyTooLargeError
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def _content_length(scope: Scope) -> int | None:
    """The declared length, if the first declaration is a number (servers refuse bodies whose
    framing disagrees with it; without one, the bytes are counted as they arrive)."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            text = bytes(value).decode("latin-1").strip()
            return int(text) if text.isascii() and text.isdigit() else None
    return None


def replayed(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the app the body already read, then the client's own messages
    (a disconnect, which streaming responses wait for)."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if delivered:
            return await receive()
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
