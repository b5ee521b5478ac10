"""What keeps Server-Sent Event streams from crowding out the rest of the API (ADR 0009).

A stream is an async generator on the event loop: between polls it holds no thread. Its database
reads go to a worker thread, but through their own small limiter, so that however many streams
poll (or however slowly a stalled database answers them) they never take more than a few of the
threads and pooled connections that ordinary requests need. And a process serves at most
`DOMINUS_MAX_STREAMS` streams at once: one more is a 429 before anything is streamed."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from dominus.api.errors import error_response

T = TypeVar("T")

# Threads that stream reads may use at once. A read takes about a millisecond, so 200 streams
# polling every 250 ms keep fewer than one busy on average; 4 absorb the bursts (measured in
# bench/sse_streams.py) while leaving the 40 default threads, and the pool's connections, to
# ordinary requests.
STREAM_READ_THREADS = 4
RETRY_AFTER_SECONDS = 5
EVENT_STREAM_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


class StreamLimits:
    """The streams of one API process: how many are open (at most `max_streams`), the limiter
    their database reads share, and whether the server is stopping (streams then end)."""

    def __init__(self, max_streams: int, read_threads: int = STREAM_READ_THREADS) -> None:
        self.max_streams = max_streams
        self.reads = anyio.CapacityLimiter(read_threads)
        self._open = 0
        # Taken and released on the event loop, read by /metrics from a worker thread; a lock
        # keeps the count right even if the app is ever driven by more than one loop.
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    @property
    def open_streams(self) -> int:
        return self._open

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """The server is stopping: open streams end at their next poll. uvicorn's graceful
        shutdown waits for every open connection, and a stream on a job nobody runs would
        otherwise hold it up for MAX_STREAM_SECONDS. (EventSource clients reconnect.)"""
        self._stopping.set()

    def try_open(self) -> bool:
        """Take a slot for a new stream; False when all are taken."""
        with self._lock:
            if self._open >= self.max_streams:
                return False
            self._open += 1
            return True

    def close(self) -> None:
        """Give a stream's slot back."""
        with self._lock:
            self._open -= 1

    async def read(self, function: Callable[[], T]) -> T:
        """Run a (synchronous, short) database read in a worker thread under the stream-read
        limiter. A cancelled caller waits for the read in flight, so no thread is left behind
        working for a stream that has gone."""
        return await anyio.to_thread.run_sync(function, limiter=self.reads)


async def refuse_a_stream(message: str, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer 429 `too_many_streams` with `Retry-After`: a stream slot was not free."""
    refusal = error_response(
        429, "too_many_streams", message, {"Retry-After": str(RETRY_AFTER_SECONDS)}
    )
    await refusal(scope, receive, send)


class EventStreamResponse(StreamingResponse):
    """A text/event-stream that holds one of the process's stream slots for as long as it is
    being sent, whatever ends it (the last event, an error, or the client going away, which
    Starlette turns into cancelling the stream). With every slot taken, a 429
    `too_many_streams` with `Retry-After` is sent instead and the events are never read."""

    def __init__(self, events: AsyncIterator[str], limits: StreamLimits) -> None:
        super().__init__(events, media_type="text/event-stream", headers=EVENT_STREAM_HEADERS)
        self._limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # The slot is taken and given back here, around the whole response: nothing can come
        # between the two, so no path through the response leaks a slot.
        if not self._limits.try_open():
            message = (
                f"{self._limits.max_streams} event streams are already open on this server "
                "(DOMINUS_MAX_STREAMS); try again later"
            )
            await refuse_a_stream(message, scope, receive, send)
            return
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._limits.close()
