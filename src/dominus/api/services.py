"""What the routes share: the runtime (store, clock), the queue, the settings, the limits on
event streams."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import Engine

from dominus.api.scheduler_health import SchedulerProbe
from dominus.api.stream_limits import StreamLimits
from dominus.jobs.client import JobQueue
from dominus.jobs.documents import StatsOut, WorkerOut
from dominus.jobs.model import JobStatus
from dominus.jobs.sql import SqlJobStore
from dominus.pipeline.service import PipelineService
from dominus.pipeline.store import PipelineStore
from dominus.runtime import Runtime
from dominus.scheduling.service import ScheduleService
from dominus.schema.migrate import ensure_migrated

# Running jobs read to tell which worker runs what.
RUNNING_JOBS_LISTED = 10_000


class SchemaGate:
    """The server starts whatever the state of its database (ADR 0006, 0011). Until it has once
    seen the schema at this code's revision, every request checks (503 `not_migrated` or
    `database_unavailable`), so none reads or writes tables that are missing or from another
    revision; after that, the check costs nothing."""

    def __init__(self) -> None:
        self._passed = False

    def check(self, engine: Engine) -> None:
        if not self._passed:
            ensure_migrated(engine)
            self._passed = True


@dataclass(frozen=True)
class ApiServices:
    runtime: Runtime
    queue: JobQueue
    schema: SchemaGate = field(default_factory=SchemaGate)
    # One per app (so per process): the cap on open streams is per process.
    streams: StreamLimits = field(init=False)

    def __post_init__(self) -> None:
        limits = StreamLimits(self.runtime.settings.DOMINUS_MAX_STREAMS)
        object.__setattr__(self, "streams", limits)  # a frozen dataclass, set once here

    @property
    def store(self) -> SqlJobStore:
        return self.runtime.store

    @cached_property
    def schedules(self) -> ScheduleService:
        return self.runtime.schedule_service()

    @cached_property
    def scheduler_probe(self) -> SchedulerProbe:
        return SchedulerProbe(self.schedules.store, self.runtime.clock)

    @property
    def runs(self) -> PipelineStore:
        return PipelineStore(self.runtime.engine)

    @property
    def pipeline(self) -> PipelineService:
        return PipelineService(self.runtime.settings, self.runs, self.queue, self.runtime.clock)

    def now(self) -> datetime:
        return self.runtime.clock()

    def alive_since(self) -> datetime:
        """Workers seen since then are alive (their heartbeat is younger than the stale age)."""
        return self.now() - timedelta(milliseconds=self.runtime.settings.JOB_MAX_RUNNING_AGE_MS)

    def stats(self) -> StatsOut:
        """Counts by status and type, dead-letter size, oldest pending age, live workers."""
        return StatsOut.of(self.store.queue_stats(self.now(), alive_since=self.alive_since()))

    def workers(self, dead_within_hours: float) -> list[WorkerOut]:
        """Live workers and those that stopped or went silent within `dead_within_hours`, each
        with `alive` and the ids of the jobs it is running (`running_jobs`)."""
        alive_since = self.alive_since()
        recent = self.now() - timedelta(hours=dead_within_hours)
        running: defaultdict[str, list[int]] = defaultdict(list)
        for job in self.store.list_jobs(status=JobStatus.RUNNING, limit=RUNNING_JOBS_LISTED):
            if job.locked_by:
                running[job.locked_by].append(job.id)
        listed = []
        for worker in self.store.list_workers():
            alive = worker.stopped_at is None and worker.last_seen_at >= alive_since
            if not alive and worker.last_seen_at < recent:
                continue
            jobs = sorted(running.get(worker.id, []))
            listed.append(WorkerOut.with_jobs(worker, alive, jobs))
        return listed


def services(request: Request) -> ApiServices:
    found: ApiServices = request.app.state.services
    found.schema.check(found.runtime.engine)
    return found


# What a route declares to get the services (checked against the schema first).
Services = Annotated[ApiServices, Depends(services)]
