"""Server-Sent Events for one pipeline run, read from the database."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from dominus.api import streaming
from dominus.errors import DatabaseError, JobNotFoundError
from dominus.jobs.model import Job
from dominus.jobs.store import JobStore
from dominus.pipeline.documents import is_finished, run_document
from dominus.pipeline.store import PipelineStore, RunNotFoundError, RunRecord


def _event(name: str, data: object) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _read(runs: PipelineStore, jobs: JobStore, run_id: int) -> tuple[RunRecord, Job | None]:
    run = runs.get_run(run_id)
    job = None
    if run.job_id is not None:
        try:
            job = jobs.get_job(run.job_id)
        except JobNotFoundError:
            job = None
    return run, job


def _document(run: RunRecord, job: Job | None) -> dict[str, Any]:
    document = run_document(run, job)
    document["progress"] = job.progress if job is not None else None
    return document


def run_stream(runs: PipelineStore, jobs: JobStore, run_id: int) -> Iterator[str]:
    """`run` events on every change (status, stages, progress), `end` when it has finished."""
    started = last_sent = time.monotonic()
    run, job = _read(runs, jobs, run_id)
    document = _document(run, job)
    yield _event("run", document)
    while not is_finished(run, job):
        if time.monotonic() - started > streaming.MAX_STREAM_SECONDS:
            yield _event("timeout", {"run_id": run_id, "status": document["status"]})
            return
        time.sleep(streaming.POLL_SECONDS)
        try:
            run, job = _read(runs, jobs, run_id)
        except RunNotFoundError:
            yield _event("gone", {"run_id": run_id})
            return
        except DatabaseError:
            continue
        fresh = _document(run, job)
        if fresh != document:
            document = fresh
            last_sent = time.monotonic()
            yield _event("run", document)
        elif time.monotonic() - last_sent > streaming.KEEPALIVE_SECONDS:
            last_sent = time.monotonic()
            yield ": keep-alive\n\n"
    yield _event("end", {"run_id": run_id, "status": document["status"]})
