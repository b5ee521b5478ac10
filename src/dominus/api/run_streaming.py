"""Server-Sent Events for one pipeline run, read from the database."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from dominus.api.stream_limits import StreamLimits
from dominus.api.streaming import follow
from dominus.jobs.documents import dumped
from dominus.jobs.model import Job
from dominus.jobs.store import JobStore
from dominus.pipeline.documents import RunEventOut, is_finished, job_of_run
from dominus.pipeline.store import PipelineStore, RunNotFoundError, RunRecord

RunState = tuple[RunRecord, Job | None]


def _document(state: RunState) -> dict[str, Any]:
    return dumped(RunEventOut.of(*state))


def run_stream(
    runs: PipelineStore, jobs: JobStore, run_id: int, limits: StreamLimits
) -> AsyncIterator[str]:
    """`run` events on every change (status, stages, progress), `end` when it has finished."""

    def read() -> RunState:
        run = runs.get_run(run_id)
        return run, job_of_run(jobs, run)

    return follow(
        read(),
        reread=read,
        limits=limits,
        signature=lambda state: json.dumps(_document(state), sort_keys=True),
        document=_document,
        finished=lambda state: is_finished(*state),
        name="run",
        ids={"run_id": run_id},
        gone=RunNotFoundError,
    )
