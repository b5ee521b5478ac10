"""Server-Sent Events for one job, read from the database (so any worker, any host)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from dominus.errors import DatabaseError, JobNotFoundError
from dominus.jobs.documents import job_document
from dominus.jobs.model import Job
from dominus.jobs.store import JobStore

POLL_SECONDS = 0.25
KEEPALIVE_SECONDS = 15.0
# A stream ends after this long even if the job has not; clients reconnect (SSE does by itself).
MAX_STREAM_SECONDS = 3600.0


def _event(name: str, data: object) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _signature(job: Job) -> tuple[object, ...]:
    return (job.status, job.attempts, json.dumps(job.progress, sort_keys=True), job.locked_by)


def job_stream(store: JobStore, job: Job) -> Iterator[str]:
    """`job` events on every change of status, attempt, progress or owner; `end` when the job
    has finished; a comment line now and then so proxies keep the connection open."""
    started = last_sent = time.monotonic()
    yield _event("job", job_document(job))
    seen = _signature(job)
    while not job.status.is_terminal:
        if time.monotonic() - started > MAX_STREAM_SECONDS:
            yield _event("timeout", {"id": job.id, "status": job.status.value})
            return
        time.sleep(POLL_SECONDS)
        try:
            job = store.get_job(job.id)
        except JobNotFoundError:
            yield _event("gone", {"id": job.id})
            return
        except DatabaseError:
            continue  # a busy or briefly unreachable database: try again on the next poll
        if _signature(job) != seen:
            seen = _signature(job)
            last_sent = time.monotonic()
            yield _event("job", job_document(job))
        elif time.monotonic() - last_sent > KEEPALIVE_SECONDS:
            last_sent = time.monotonic()
            yield ": keep-alive\n\n"
    yield _event("end", {"id": job.id, "status": job.status.value})
