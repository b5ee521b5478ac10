"""Server-Sent Events read from the database (so they follow work done by any worker, on any
host): one polling loop, used for jobs and for pipeline runs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

from dominus.errors import DatabaseError, JobNotFoundError
from dominus.jobs.documents import job_document
from dominus.jobs.model import Job
from dominus.jobs.store import JobStore

T = TypeVar("T")

POLL_SECONDS = 0.25
KEEPALIVE_SECONDS = 15.0
# A stream ends after this long even if the job has not; clients reconnect (SSE does by itself).
MAX_STREAM_SECONDS = 3600.0


def sse_event(name: str, data: object) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def follow(
    first: T,
    *,
    reread: Callable[[], T],
    signature: Callable[[T], Hashable],
    document: Callable[[T], dict[str, Any]],
    finished: Callable[[T], bool],
    name: str,
    ids: dict[str, Any],
    gone: type[Exception],
) -> Iterator[str]:
    """`name` events with `document(item)` whenever `signature(item)` changes, then `end` once
    `finished(item)`; `gone` if it disappears, `timeout` after MAX_STREAM_SECONDS; a comment
    line now and then so proxies keep the connection open. `ids` go into those last events."""
    started = last_sent = time.monotonic()
    item = first
    yield sse_event(name, document(item))
    seen = signature(item)
    while not finished(item):
        if time.monotonic() - started > MAX_STREAM_SECONDS:
            yield sse_event("timeout", ids | {"status": document(item)["status"]})
            return
        time.sleep(POLL_SECONDS)
        try:
            item = reread()
        except gone:
            yield sse_event("gone", ids)
            return
        except DatabaseError:
            continue  # a busy or briefly unreachable database: try again on the next poll
        if signature(item) != seen:
            seen = signature(item)
            last_sent = time.monotonic()
            yield sse_event(name, document(item))
        elif time.monotonic() - last_sent > KEEPALIVE_SECONDS:
            last_sent = time.monotonic()
            yield ": keep-alive\n\n"
    yield sse_event("end", ids | {"status": document(item)["status"]})


def _signature(job: Job) -> tuple[object, ...]:
    return (job.status, job.attempts, json.dumps(job.progress, sort_keys=True), job.locked_by)


def job_stream(store: JobStore, job: Job) -> Iterator[str]:
    """`job` events on every change of status, attempt, progress or owner; `end` when the job
    has finished."""
    return follow(
        job,
        reread=lambda: store.get_job(job.id),
        signature=_signature,
        document=job_document,
        finished=lambda current: current.status.is_terminal,
        name="job",
        ids={"id": job.id},
        gone=JobNotFoundError,
    )
