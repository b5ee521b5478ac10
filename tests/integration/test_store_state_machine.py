"""Stateful property test of the store (hypothesis `RuleBasedStateMachine`) against a small
reference model, on SQLite and on PostgreSQL.

Several workers enqueue, claim, heartbeat, report progress, complete, fail (permanently or
not), cancel, get interrupted at shutdown (requeue), are reclaimed when the fake clock moves
past the max running age, and users cancel, retry and requeue from the dead-letter queue, in any
interleaving. A worker keeps the claims it believes it holds, so it goes on writing under claims
it has lost. After every step the store must agree with the model, and:

- statuses move only along the documented transitions (dominus.jobs.model);
- attempts never exceed max_attempts;
- a write under a stale claim is refused and, for an outcome, leaves a `lost` event;
- a job is failed (dead-lettered, one open entry) iff its attempts were exhausted or the failure
  was permanent; no open dead-letter entry otherwise;
- a running job is locked by exactly one worker, and only that worker's claim is honoured.

Every example starts from empty tables *and* fresh id sequences (PostgreSQL's sequences survive a
DELETE, SQLite's rowids do not), so an example replays exactly, ids included, when hypothesis
shrinks a failure. A failure that does not replay (a dropped connection to a shared server, or
the suite's timeout firing inside an example while a failure is being shrunk) is reported by
hypothesis as a flaky failure whose sub-exceptions hold the original error and a
`FlakyStrategyDefinition` ("the second run drew more data than the first run"): that was the
earlier PostgreSQL report, see docs/reliability.md. Hence this test's own, longer timeout.

60 examples of up to 50 steps by default (about 10 s on SQLite, 25 s on PostgreSQL);
`--hypothesis-profile=long` runs 400 of 100 (profiles in tests/conftest.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import Engine, delete, func, select, text

from dominus.errors import InvalidTransitionError
from dominus.jobs import EventKind, JobStatus, SqlJobStore
from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Claim,
    Completed,
    Failed,
    Interrupted,
    NewJob,
)
from dominus.schema.tables import dead_letter_jobs, job_events, job_metrics, job_queue, workers
from tests.support.clock import T0

# The default budget of this test, more than the suite's profile gives (a step takes ~3 ms on
# SQLite, ~10 ms on PostgreSQL): short runs must still reach lost claims and exhausted attempts.
# The `long` profile (--hypothesis-profile=long) gives more.
EXAMPLES, STEPS = 60, 50
LONG = settings().max_examples > EXAMPLES

JOB_TYPE = "prop.job"
WORKERS = ("w1", "w2", "w3")
MAX_AGE = 10.0

LEGAL = {
    (JobStatus.PENDING, JobStatus.RUNNING),
    (JobStatus.PENDING, JobStatus.CANCELLED),
    (JobStatus.RUNNING, JobStatus.COMPLETED),
    (JobStatus.RUNNING, JobStatus.PENDING),
    (JobStatus.RUNNING, JobStatus.FAILED),
    (JobStatus.RUNNING, JobStatus.CANCELLED),
    (JobStatus.FAILED, JobStatus.PENDING),
    (JobStatus.CANCELLED, JobStatus.PENDING),
}


@dataclass
class ModelJob:
    id: int
    max_attempts: int
    status: JobStatus = JobStatus.PENDING
    attempts: int = 0
    owner: str | None = None
    heartbeat_at: datetime | None = None
    run_at: datetime = T0
    dead_letter_open: bool = False
    lost_events: int = 0

    def holds(self, claim: Claim) -> bool:
        return (
            self.status is JobStatus.RUNNING
            and self.owner == claim.worker_id
            and self.attempts == claim.attempt
        )


@dataclass
class Model:
    jobs: dict[int, ModelJob] = field(default_factory=dict)

    def due(self, now: datetime) -> list[ModelJob]:
        pending = [
            job
            for job in self.jobs.values()
            if job.status is JobStatus.PENDING and job.run_at <= now
        ]
        return sorted(pending, key=lambda job: (job.run_at, job.id))


def no_delay(_job_type: str, _attempt: int) -> float:
    return 0.0


TABLES = (job_events, dead_letter_jobs, job_metrics, job_queue, workers)


def reset(engine: Engine) -> None:
    """Empty the store's tables and restart their id sequences."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            names = ", ".join(table.name for table in TABLES)
            connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
            return
        for table in TABLES:
            connection.execute(delete(table))  # INTEGER PRIMARY KEY: rowids restart at 1


class StoreMachine(RuleBasedStateMachine):
    def __init__(self, store: SqlJobStore) -> None:
        super().__init__()
        self.store = store
        # At the start rather than in teardown: whatever the previous example left (it may
        # have stopped anywhere), this one starts from the same state every time.
        reset(store.engine)
        self.now = T0
        self.model = Model()
        self.held: dict[str, set[Claim]] = {worker: set() for worker in WORKERS}
        self.last_status: dict[int, JobStatus] = {}

    # --- helpers -----------------------------------------------------------------------------
    def _all_held(self) -> list[Claim]:
        return sorted(
            (claim for claims in self.held.values() for claim in claims),
            key=lambda claim: (claim.job_id, claim.worker_id, claim.attempt),
        )

    def _lost(self, claim: Claim) -> None:
        self.model.jobs[claim.job_id].lost_events += 1

    def _settle(self, outcome: AttemptOutcome) -> bool:
        self.held[outcome.claim.worker_id].discard(outcome.claim)
        job = self.model.jobs[outcome.claim.job_id]
        expected = job.holds(outcome.claim)
        accepted, _ = self.store.settle([outcome], self.now)
        assert accepted == [expected], (outcome, job)
        if not expected:
            self._lost(outcome.claim)
        return expected

    def _release(self, job: ModelJob, run_at: datetime) -> None:
        job.status, job.owner, job.heartbeat_at, job.run_at = (
            JobStatus.PENDING,
            None,
            None,
            run_at,
        )

    # --- time --------------------------------------------------------------------------------
    @rule(seconds=st.sampled_from([0.001, 1.0, MAX_AGE / 2, MAX_AGE + 1]))
    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    # --- callers -----------------------------------------------------------------------------
    @initialize(count=st.integers(1, 3), max_attempts=st.integers(1, 3))
    def first_jobs(self, count: int, max_attempts: int) -> None:
        self.enqueue(count, max_attempts)

    @rule(count=st.integers(1, 3), max_attempts=st.integers(1, 3))
    def enqueue(self, count: int, max_attempts: int) -> None:
        jobs = [NewJob(JOB_TYPE, {"n": n}, 0, max_attempts, self.now) for n in range(count)]
        for result in self.store.enqueue(jobs, self.now):
            assert result.created and result.job_id not in self.model.jobs
            self.model.jobs[result.job_id] = ModelJob(result.job_id, max_attempts, run_at=self.now)

    @precondition(lambda self: self.model.jobs)
    @rule(data=st.data())
    def request_cancel(self, data: st.DataObject) -> None:
        job = self.model.jobs[data.draw(st.sampled_from(sorted(self.model.jobs)))]
        if job.status.is_terminal:
            with pytest.raises(InvalidTransitionError):
                self.store.request_cancel(job.id, self.now)
            return
        self.store.request_cancel(job.id, self.now)
        if job.status is JobStatus.PENDING:
            job.status = JobStatus.CANCELLED

    @precondition(lambda self: self.model.jobs)
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        job = self.model.jobs[data.draw(st.sampled_from(sorted(self.model.jobs)))]
        if job.status not in (JobStatus.FAILED, JobStatus.CANCELLED):
            with pytest.raises(InvalidTransitionError):
                self.store.retry_job(job.id, self.now)
            return
        self.store.retry_job(job.id, self.now)
        self._release(job, self.now)
        job.attempts, job.dead_letter_open = 0, False

    @precondition(lambda self: any(job.dead_letter_open for job in self.model.jobs.values()))
    @rule(data=st.data())
    def requeue_dead_letter(self, data: st.DataObject) -> None:
        entries = self.store.list_dead_letters()
        entry = data.draw(st.sampled_from(entries))
        job = self.model.jobs[entry.job_id]
        requeued = self.store.requeue_dead_letter(entry.id, self.now)
        assert requeued.id == job.id
        self._release(job, self.now)
        job.attempts, job.dead_letter_open = 0, False

    # --- workers -----------------------------------------------------------------------------
    @rule(worker=st.sampled_from(WORKERS), limit=st.integers(1, 3))
    def claim(self, worker: str, limit: int) -> None:
        expected = self.model.due(self.now)[:limit]
        claimed = self.store.claim(worker, [JOB_TYPE], limit, self.now)
        assert [job.id for job in claimed] == [job.id for job in expected]
        for row in claimed:
            job = self.model.jobs[row.id]
            job.status, job.owner, job.heartbeat_at = JobStatus.RUNNING, worker, self.now
            job.attempts += 1
            assert row.claim == Claim(job.id, worker, job.attempts)
            self.held[worker].add(row.claim)

    @rule(worker=st.sampled_from(WORKERS))
    def heartbeat(self, worker: str) -> None:
        claims = sorted(self.held[worker], key=lambda claim: claim.job_id)
        held = {claim for claim, _cancel in self.store.heartbeat(worker, claims, self.now)}
        expected = {claim for claim in claims if self.model.jobs[claim.job_id].holds(claim)}
        assert held == expected
        for claim in expected:
            self.model.jobs[claim.job_id].heartbeat_at = self.now

    @precondition(lambda self: self._all_held())
    @rule(data=st.data())
    def progress(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self._all_held()))
        expected = self.model.jobs[claim.job_id].holds(claim)
        assert self.store.record_progress(claim, {"at": self.now.isoformat()}, self.now) is expected

    @precondition(lambda self: self._all_held())
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self._all_held()))
        if self._settle(Completed(claim, result={"ok": True})):
            job = self.model.jobs[claim.job_id]
            job.status = JobStatus.COMPLETED

    @precondition(lambda self: self._all_held())
    @rule(data=st.data(), permanent=st.booleans(), retry_in=st.sampled_from([0.0, 2.0]))
    def fail(self, data: st.DataObject, permanent: bool, retry_in: float) -> None:
        claim = data.draw(st.sampled_from(self._all_held()))
        retry_at = self.now + timedelta(seconds=retry_in)
        outcome = Failed(claim, error="boom", retry_at=retry_at, permanent=permanent)
        if self._settle(outcome):
            job = self.model.jobs[claim.job_id]
            if permanent or job.attempts >= job.max_attempts:
                job.status, job.dead_letter_open = JobStatus.FAILED, True
            else:
                self._release(job, retry_at)

    @precondition(lambda self: self._all_held())
    @rule(data=st.data())
    def cancelled_outcome(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self._all_held()))
        if self._settle(Cancelled(claim)):
            self.model.jobs[claim.job_id].status = JobStatus.CANCELLED

    @precondition(lambda self: self._all_held())
    @rule(data=st.data(), requeue=st.booleans())
    def shutdown(self, data: st.DataObject, requeue: bool) -> None:
        """Worker shutdown: requeued without spending the attempt, or cancelled."""
        claim = data.draw(st.sampled_from(self._all_held()))
        if self._settle(Interrupted(claim, requeue=requeue)):
            job = self.model.jobs[claim.job_id]
            if requeue:
                self._release(job, self.now)
                job.attempts -= 1
            else:
                job.status = JobStatus.CANCELLED

    @rule()
    def reclaim(self) -> None:
        self._reclaim()

    @rule()
    def stall_then_reclaim(self) -> None:
        """A pause past the max running age, then a reaper: every running job whose worker has
        not heartbeated meanwhile is taken back, so its worker's writes go stale. (The same as
        `tick` then `reclaim`, made one rule so that short runs reach lost claims often.)"""
        self.now += timedelta(seconds=MAX_AGE + 1)
        self._reclaim()

    def _reclaim(self) -> None:
        cutoff = self.now - timedelta(seconds=MAX_AGE)
        stale = {
            job.id
            for job in self.model.jobs.values()
            if job.status is JobStatus.RUNNING
            and job.heartbeat_at is not None
            and job.heartbeat_at < cutoff
        }
        reclaimed = self.store.reclaim_stale(self.now, MAX_AGE, no_delay)
        assert {job.job_id for job in reclaimed} == stale
        for item in reclaimed:
            job = self.model.jobs[item.job_id]
            assert item.from_worker == job.owner and item.attempt == job.attempts
            exhausted = job.attempts >= job.max_attempts
            assert item.dead_lettered is exhausted
            if exhausted:
                job.status, job.dead_letter_open = JobStatus.FAILED, True
            else:
                self._release(job, self.now)

    # --- invariants --------------------------------------------------------------------------
    @invariant()
    def store_agrees_with_the_model(self) -> None:
        # Three reads per step (not three per job): the rows, the lost events, the open entries.
        with self.store.engine.connect() as connection:
            rows = {
                row.id: row
                for row in connection.execute(
                    select(
                        job_queue.c.id,
                        job_queue.c.status,
                        job_queue.c.attempts,
                        job_queue.c.max_attempts,
                        job_queue.c.locked_by,
                    )
                )
            }
            lost_events: dict[int, int] = dict(
                connection.execute(
                    select(job_events.c.job_id, func.count())
                    .where(job_events.c.kind == EventKind.LOST.value)
                    .group_by(job_events.c.job_id)
                ).all()
            )
        open_entries: dict[int, int] = {}
        for entry in self.store.list_dead_letters(limit=1000):
            open_entries[entry.job_id] = open_entries.get(entry.job_id, 0) + 1
        assert set(rows) == set(self.model.jobs)
        for job in self.model.jobs.values():
            row = rows[job.id]
            status = JobStatus(row.status)
            assert (status, row.attempts) == (job.status, job.attempts), (row, job)
            assert row.attempts <= row.max_attempts
            if status is JobStatus.RUNNING:
                assert row.locked_by == job.owner and row.locked_by in WORKERS
            if status is JobStatus.PENDING:
                assert row.locked_by is None
            before = self.last_status.get(job.id, JobStatus.PENDING)
            assert before == status or (before, status) in LEGAL, (before, status)
            self.last_status[job.id] = status
            assert open_entries.get(job.id, 0) == (1 if job.dead_letter_open else 0)
            assert job.dead_letter_open == (status is JobStatus.FAILED)
            assert lost_events.get(job.id, 0) == job.lost_events


# A failure is shrunk by replaying examples, which takes minutes on PostgreSQL: the suite's
# timeout (raised inside the example that runs then) would cut the shrinking short and hypothesis
# would report that interruption as a flaky failure, hiding the real one.
@pytest.mark.timeout(3600 if LONG else 900)
@pytest.mark.backends("sqlite", "postgresql")
def test_the_store_follows_its_model(store: SqlJobStore) -> None:
    # Hypothesis takes any factory of a machine, not only its class.
    machine = lambda: StoreMachine(store)  # noqa: E731
    run_state_machine_as_test(machine, settings=machine_settings())  # type: ignore[arg-type]


def machine_settings() -> settings:
    chosen = settings()  # the loaded profile
    return settings(
        max_examples=chosen.max_examples if LONG else EXAMPLES,
        stateful_step_count=chosen.stateful_step_count if LONG else STEPS,
        deadline=None,
        database=None,
    )
