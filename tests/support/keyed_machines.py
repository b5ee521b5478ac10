"""What the keyed stateful tests share (concurrency keys, rate keys): eight workers on a fake
clock, a model of each job, and the worker rules that do not depend on the key (heartbeat,
complete, fail, crash, reclaim). A subclass adds how jobs are enqueued and claimed and what must
hold; hypothesis collects the rules defined here with its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule
from sqlalchemy import Engine, Table, delete, text

from dominus.jobs import JobStatus, SqlJobStore
from dominus.jobs.model import AttemptOutcome, Claim, Completed, Failed
from tests.support.clock import FakeClock

WORKERS = tuple(f"w{n}" for n in range(1, 9))
MAX_AGE = 10.0
MAX_ATTEMPTS = 3


@dataclass
class ModelJob:
    id: int
    key: str | None
    status: JobStatus = JobStatus.PENDING
    attempts: int = 0
    owner: str | None = None
    run_at: datetime = datetime.min
    heartbeat_at: datetime | None = None

    def holds(self, claim: Claim) -> bool:
        return (
            self.status is JobStatus.RUNNING
            and self.owner == claim.worker_id
            and self.attempts == claim.attempt
        )


def reset(engine: Engine, tables: Sequence[Table]) -> None:
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            names = ", ".join(table.name for table in tables)
            connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
            return
        for table in tables:
            connection.execute(delete(table))


def no_delay(_job_type: str, _attempt: int) -> float:
    return 0.0


class WorkersMachine(RuleBasedStateMachine):
    """The store emptied of `tables`, a fresh clock, and the workers' key-independent rules."""

    def __init__(self, store: SqlJobStore, tables: Sequence[Table]) -> None:
        super().__init__()
        reset(store.engine, tables)
        self.store = store
        self.clock = FakeClock()
        self.jobs: dict[int, ModelJob] = {}
        self.held: dict[str, set[Claim]] = {worker: set() for worker in WORKERS}

    def _all_held(self) -> list[Claim]:
        return sorted(
            (claim for claims in self.held.values() for claim in claims),
            key=lambda claim: (claim.job_id, claim.worker_id, claim.attempt),
        )

    def _release(self, job: ModelJob, run_at: datetime) -> None:
        job.status, job.owner, job.heartbeat_at, job.run_at = JobStatus.PENDING, None, None, run_at

    def _settle(self, outcome: AttemptOutcome) -> bool:
        self.held[outcome.claim.worker_id].discard(outcome.claim)
        expected = self.jobs[outcome.claim.job_id].holds(outcome.claim)
        accepted, _ = self.store.settle([outcome], self.clock())
        assert accepted == [expected]
        return expected

    @rule(worker=st.sampled_from(WORKERS))
    def heartbeat(self, worker: str) -> None:
        claims = sorted(self.held[worker], key=lambda claim: claim.job_id)
        for claim, _cancel in self.store.heartbeat(worker, claims, self.clock()):
            self.jobs[claim.job_id].heartbeat_at = self.clock()

    @precondition(lambda self: self._all_held())
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self._all_held()))
        if self._settle(Completed(claim)):
            self.jobs[claim.job_id].status = JobStatus.COMPLETED

    @precondition(lambda self: self._all_held())
    @rule(data=st.data())
    def fail(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self._all_held()))
        if self._settle(Failed(claim, error="boom", retry_at=self.clock())):
            job = self.jobs[claim.job_id]
            if job.attempts >= MAX_ATTEMPTS:
                job.status, job.owner = JobStatus.FAILED, None
            else:
                self._release(job, self.clock())

    @precondition(lambda self: self._all_held())
    @rule(worker=st.sampled_from(WORKERS))
    def crash(self, worker: str) -> None:
        """The worker dies (SIGKILL): its jobs stay running, unheartbeated, until reclaimed."""
        self.held[worker].clear()

    @rule()
    def reclaim(self) -> None:
        now = self.clock()
        cutoff = now - timedelta(seconds=MAX_AGE)
        stale = {
            job.id
            for job in self.jobs.values()
            if job.status is JobStatus.RUNNING
            and job.heartbeat_at is not None
            and job.heartbeat_at < cutoff
        }
        reclaimed = self.store.reclaim_stale(now, MAX_AGE, no_delay)
        assert {item.job_id for item in reclaimed} == stale
        for item in reclaimed:
            job = self.jobs[item.job_id]
            if item.dead_lettered:
                job.status, job.owner = JobStatus.FAILED, None
            else:
                self._release(job, now)
