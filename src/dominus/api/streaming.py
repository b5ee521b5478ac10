"""Server-Sent Events read from the database (so they follow work done by any worker, on any
host): one polling loop, used for jobs and for pipeline runs. It is asynchronous: a stream sleeps
on the event loop between polls and borrows a thread only for each read (ADR 0009)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Hashable
from typing import Any, TypeVar

import anyio

from dominus.api.stream_limits import StreamLimits
from dominus.errors import DatabaseError, JobNotFoundError
from dominus.jobs.documents import JobOut, dumped
from dominus.jobs.model import Job
from dominus.jobs.store import JobStore

T = TypeVar("T")

POLL_SECONDS = 0.25
KEEPALIVE_SECONDS = 15.0
# A stream ends after this long even if the job has not; clients reconnect (SSE does by itself).
MAX_STREAM_SECONDS = 3600.0


def sse_event(name: str, data: object) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


async def follow(
    first: T,
    *,
    reread: Callable[[], T],
    limits: StreamLimits,
    signature: Callable[[T], Hashable],
    document: Callable[[T], dict[str, Any]],
    finished: Callable[[T], bool],
    name: str,
    ids: dict[str, Any],
    gone: type[Exception],
    poll_seconds: float = POLL_SECONDS,
    encode: Callable[[str, Any], str] = sse_event,
) -> AsyncIterator[str]:
    """`name` events with `document(item)` whenever `signature(item)` changes, then `end` once
    `finished(item)`; `gone` if it disappears, `timeout` after MAX_STREAM_SECONDS; a comment
    line now and then so proxies keep the connection open. `ids` go into those last events.
    `reread` is a blocking database read, run in a thread under `limits`. The stream just ends
    when the server stops. `encode` writes an event (JSON by default; the dashboard's are
    HTML), `poll_seconds` is the pause between reads."""
    started = last_sent = time.monotonic()
    item = first
    yield encode(name, document(item))
    seen = signature(item)
    while not finished(item):
        if time.monotonic() - started > MAX_STREAM_SECONDS:
            yield encode("timeout", ids | {"status": document(item)["status"]})
            return
        await anyio.sleep(poll_seconds)
        if limits.stopping:
            return  # no `end`: the job has not ended; a client reconnects to a live server
        try:
            item = await limits.read(reread)
        except gone:
            yield encode("gone", ids)
            return
        except DatabaseError:
            continue  # a busy or briefly unreachable database: try again on the next poll
        if signature(item) != seen:
            seen = signature(item)
            last_sent = time.monotonic()
            yield encode(name, document(item))
        elif time.monotonic() - last_sent > KEEPALIVE_SECONDS:
            last_sent = time.monotonic()
            yield ": keep-alive\n\n"
    yield encode("end", ids | {"status": document(item)["status"]})


def _signature(job: Job) -> tuple[object, ...]:
    return (job.status, job.attempts, json.dumps(job.progress, sort_keys=True), job.locked_by)


def job_stream(store: JobStore, job: Job, limits: StreamLimits) -> AsyncIterator[str]:
    """`job` events on every change of status, attempt, progress or owner; `end` when the job
    has finished."""
    return follow(
        job,
        reread=lambda: store.get_job(job.id),
        limits=limits,
        signature=_signature,
        document=lambda job: dumped(JobOut.of(job)),
        finished=lambda current: current.status.is_terminal,
        name="job",
        ids={"id": job.id},
        gone=JobNotFoundError,
    )
