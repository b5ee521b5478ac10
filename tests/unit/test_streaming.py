"""The SSE polling loop (`dominus.api.streaming.follow`) on its own: what it sends and when, with
rereads that a test scripts. It runs on an event loop; each reread runs in a worker thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dominus.api import streaming
from dominus.api.stream_limits import StreamLimits
from dominus.errors import DatabaseError

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "POLL_SECONDS", 0.001)


class GoneError(Exception):
    pass


def scripted(*steps: object) -> Callable[[], dict[str, Any]]:
    """A reread returning (or raising) each step in turn, then the last one for ever."""
    remaining: Iterator[object] = iter(steps)
    last: list[object] = [None]

    def reread() -> dict[str, Any]:
        step = next(remaining, last[0])
        last[0] = step
        if isinstance(step, Exception):
            raise step
        assert isinstance(step, dict)
        return step

    return reread


async def events_of(
    first: dict[str, Any],
    reread: Callable[[], dict[str, Any]],
    limits: StreamLimits | None = None,
) -> list[str]:
    stream = streaming.follow(
        first,
        reread=reread,
        limits=limits or StreamLimits(10),
        signature=lambda item: item["status"],
        document=lambda item: item,
        finished=lambda item: item["status"] == "done",
        name="job",
        ids={"id": 7},
        gone=GoneError,
    )
    return [event async for event in stream]


def job(status: str) -> dict[str, Any]:
    return {"id": 7, "status": status}


async def test_an_event_per_change_then_end() -> None:
    reread = scripted(job("pending"), job("running"), job("running"), job("done"))
    assert await events_of(job("pending"), reread) == [
        streaming.sse_event("job", job("pending")),
        streaming.sse_event("job", job("running")),
        streaming.sse_event("job", job("done")),
        streaming.sse_event("end", {"id": 7, "status": "done"}),
    ]


async def test_a_database_error_is_tried_again_at_the_next_poll() -> None:
    reread = scripted(DatabaseError("busy"), DatabaseError("busy"), job("done"))
    events = await events_of(job("pending"), reread)
    assert events[-2:] == [
        streaming.sse_event("job", job("done")),
        streaming.sse_event("end", {"id": 7, "status": "done"}),
    ]


async def test_gone() -> None:
    events = await events_of(job("pending"), scripted(job("running"), GoneError()))
    assert events[-1] == streaming.sse_event("gone", {"id": 7})


async def test_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "MAX_STREAM_SECONDS", 0.05)
    events = await events_of(job("pending"), scripted(job("pending")))
    assert events[0] == streaming.sse_event("job", job("pending"))
    assert events[-1] == streaming.sse_event("timeout", {"id": 7, "status": "pending"})


async def test_keep_alive_comments_while_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "KEEPALIVE_SECONDS", 0.0)
    monkeypatch.setattr(streaming, "MAX_STREAM_SECONDS", 0.05)
    events = await events_of(job("pending"), scripted(job("pending")))
    assert ": keep-alive\n\n" in events


async def test_a_stopping_server_ends_the_stream_without_end() -> None:
    limits = StreamLimits(10)
    limits.stop()
    assert await events_of(job("pending"), scripted(job("running")), limits) == [
        streaming.sse_event("job", job("pending"))
    ]


async def test_rereads_run_in_worker_threads_within_the_read_limiter() -> None:
    loop_thread = threading.get_ident()
    limits = StreamLimits(10, read_threads=1)
    seen: list[tuple[int, float]] = []
    steps = scripted(job("running"), job("done"))

    def reread() -> dict[str, Any]:
        seen.append((threading.get_ident(), limits.reads.borrowed_tokens))
        return steps()

    await events_of(job("pending"), reread, limits)
    assert seen, "no reread"
    assert all(thread != loop_thread for thread, _ in seen)
    assert all(borrowed == 1 for _, borrowed in seen)
    assert limits.reads.borrowed_tokens == 0
