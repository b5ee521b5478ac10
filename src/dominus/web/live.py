"""The dashboard's live parts: Server-Sent Events carrying HTML fragments, which htmx's SSE
extension swaps into the page (ADR 0023).

They are the API's streams (`dominus.api.streaming.follow`: asynchronous, reads in the stream
limiter's few threads, slots of DOMINUS_MAX_STREAMS), rendered as HTML. Each page opens at most
one. And dashboard streams may hold at most half of the process's slots between them: a
dashboard left open in many tabs gets 429s for its live parts (the page itself still loads,
and says how to refresh) while API clients keep the other half.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from starlette.types import Receive, Scope, Send

from dominus.api.stream_limits import EventStreamResponse, StreamLimits, refuse_a_stream
from dominus.api.streaming import follow

T = TypeVar("T")

OVERVIEW_POLL_SECONDS = 2.0  # a page of counts: cheap, but not four times a second per tab


def dashboard_share(max_streams: int) -> StreamLimits:
    """The dashboard's own count of open streams: at most half the process's (at least one)."""
    return StreamLimits(max(1, max_streams // 2))


def html_event(name: str, data: Any) -> str:
    """An SSE event whose data is the HTML in `data["html"]` (one `data:` line per line), or,
    for the closing events (`end`, `gone`, `timeout`), the status in words."""
    if isinstance(data, dict) and "html" in data:
        text = str(data["html"])
    elif isinstance(data, dict):
        text = str(data.get("status", ""))
    else:
        text = str(data)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return f"event: {name}\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


class NeverGoneError(Exception):
    """For streams of things that cannot disappear (the overview)."""


def live_fragments(
    first: T,
    *,
    reread: Callable[[], T],
    limits: StreamLimits,
    render: Callable[[T], str],
    status: Callable[[T], str],
    finished: Callable[[T], bool],
    name: str,
    ids: dict[str, Any],
    gone: type[Exception] = NeverGoneError,
    poll_seconds: float | None = None,
) -> AsyncIterator[str]:
    """`name` events with `render(item)` whenever the HTML changes, then `end` once
    `finished(item)`: the API's `follow` with HTML for data."""

    def document(item: T) -> dict[str, Any]:
        return {"html": render(item), "status": status(item)}

    options: dict[str, Any] = {}
    if poll_seconds is not None:
        options["poll_seconds"] = poll_seconds
    return follow(
        first,
        reread=reread,
        limits=limits,
        signature=render,
        document=document,
        finished=finished,
        name=name,
        ids=ids,
        gone=gone,
        encode=html_event,
        **options,
    )


class DashboardStreamResponse(EventStreamResponse):
    """An event stream that holds one of the dashboard's slots as well as one of the
    process's: 429 `too_many_streams` when either is full."""

    def __init__(
        self, events: AsyncIterator[str], limits: StreamLimits, share: StreamLimits
    ) -> None:
        super().__init__(events, limits)
        self._share = share

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._share.try_open():
            message = (
                f"dashboard pages already hold {self._share.max_streams} live streams on this "
                "server (half of DOMINUS_MAX_STREAMS); close some tabs or reload later"
            )
            await refuse_a_stream(message, scope, receive, send)
            return
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._share.close()
