"""Limits on what a request may send, checked before anything parses it.

FastAPI parses a JSON body with Python's `json` before any of our code runs, and that parser
recurses: a body nested ~1,000 levels deep ends as a RecursionError (FastAPI's own catch-all
turns it into a vague 400), a few hundred levels get through it and recurse further down. So this
ASGI middleware reads the body first, refuses one nested more than MAX_JSON_DEPTH levels with a
422 (a cheap scan of the raw bytes, no parsing), and hands the app the body it read.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dominus.api.errors import error_response
from dominus.jobs.json_limits import MAX_JSON_DEPTH, text_nests_deeper_than, too_deep_message


class RequestLimitsMiddleware:
    """Answers 422 `invalid_request` to an HTTP request whose body nests too deep."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return  # the client went away before it finished sending
        if text_nests_deeper_than(body, MAX_JSON_DEPTH):
            response = error_response(422, "invalid_request", too_deep_message("the request body"))
            await response(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(receive: Receive) -> bytes | None:
    """The whole body; None if the client disconnected first."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
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
