"""Stateful property test of concurrency keys (hypothesis `RuleBasedStateMachine`, ADR 0052), on
SQLite and on PostgreSQL.

Eight workers claim, complete, fail, snooze and crash (a crashed worker's jobs stay running until
the fake clock passes the max running age and a reaper takes them back), while jobs with random
keys (or none) are enqueued. After every step:

- no key has more running jobs than its limit (claimed ahead included: every running row);
- each claim took exactly what a reference model says: in claim order, every due job without a
  key, and a keyed job while its key has a free slot, up to the claim's limit;
- the store agrees with the model on every job's status and attempts (a job held back never
  spends an attempt).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import select

from dominus.jobs import JobStatus, SqlJobStore
from dominus.jobs.model import NewJob, Snoozed
from dominus.schema.tables import dead_letter_jobs, job_events, job_metrics, job_queue, workers
from tests.support.keyed_machines import MAX_AGE, MAX_ATTEMPTS, WORKERS, ModelJob, WorkersMachine

EXAMPLES, STEPS = 40, 50
LONG = settings().max_examples > EXAMPLES

JOB_TYPE = "prop.keyed"
LIMITS = {"a": 1, "b": 2, "c": 3}
KEYS = (None, *LIMITS)
TABLES = (job_events, dead_letter_jobs, job_metrics, job_queue, workers)


class KeysMachine(WorkersMachine):
    def __init__(self, store: SqlJobStore) -> None:
        super().__init__(store, TABLES)

    # --- the model ---------------------------------------------------------------------------
    def _running(self) -> Counter[str | None]:
        return Counter(job.key for job in self.jobs.values() if job.status is JobStatus.RUNNING)

    def _expected_claim(self, limit: int) -> list[int]:
        now = self.clock()
        due = sorted(
            (job for job in self.jobs.values() if job.status is JobStatus.PENDING),
            key=lambda job: (job.run_at, job.id),
        )
        running = self._running()
        taken: list[int] = []
        for job in due:
            if len(taken) == limit or job.run_at > now:
                continue
            if job.key is None or running[job.key] < LIMITS[job.key]:
                taken.append(job.id)
                running[job.key] += 1
        return taken

    # --- callers and time --------------------------------------------------------------------
    @initialize(keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=6))
    def first_jobs(self, keys: list[str | None]) -> None:
        self.enqueue(keys)

    @rule(keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=4))
    def enqueue(self, keys: list[str | None]) -> None:
        now = self.clock()
        jobs = [
            NewJob(
                JOB_TYPE,
                {},
                0,
                MAX_ATTEMPTS,
                now,
                concurrency_key=key,
                concurrency_limit=None if key is None else LIMITS[key],
            )
            for key in keys
        ]
        for key, result in zip(keys, self.store.enqueue(jobs, now), strict=True):
            self.jobs[result.job_id] = ModelJob(result.job_id, key, run_at=now)

    @rule(seconds=st.sampled_from([0.5, MAX_AGE / 2]))
    def tick(self, seconds: float) -> None:
        self.clock.advance(seconds)

    # --- workers -----------------------------------------------------------------------------
    @rule(worker=st.sampled_from(WORKERS), limit=st.integers(1, 4))
    def claim(self, worker: str, limit: int) -> None:
        expected = self._expected_claim(limit)
        claimed = self.store.claim(worker, [JOB_TYPE], limit, self.clock())
        assert sorted(job.id for job in claimed) == sorted(expected)
        for row in claimed:
            job = self.jobs[row.id]
            job.status, job.owner, job.heartbeat_at = JobStatus.RUNNING, worker, self.clock()
            job.attempts += 1
            self.held[worker].add(row.claim)

    @precondition(lambda self: self._all_held())
    @rule(data=st.data())
    def snooze(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self._all_held()))
        run_at = self.clock() + timedelta(seconds=1)
        if self._settle(Snoozed(claim, run_at=run_at, seconds=1)):
            job = self.jobs[claim.job_id]
            self._release(job, run_at)
            job.attempts -= 1

    # --- invariants --------------------------------------------------------------------------
    @invariant()
    def no_key_above_its_limit_and_the_store_agrees(self) -> None:
        with self.store.engine.connect() as connection:
            rows = connection.execute(
                select(
                    job_queue.c.id,
                    job_queue.c.status,
                    job_queue.c.attempts,
                    job_queue.c.concurrency_key,
                )
            ).all()
        running = Counter(row.concurrency_key for row in rows if row.status == "running")
        for key, limit in LIMITS.items():
            assert running[key] <= limit, running
        assert {row.id for row in rows} == set(self.jobs)
        for row in rows:
            job = self.jobs[row.id]
            assert (JobStatus(row.status), row.attempts) == (job.status, job.attempts), (row, job)


@pytest.mark.timeout(3600 if LONG else 900)
@pytest.mark.backends("sqlite", "postgresql")
def test_no_key_ever_runs_more_than_its_limit(store: SqlJobStore) -> None:
    machine = lambda: KeysMachine(store)  # noqa: E731
    chosen = settings()
    run_state_machine_as_test(
        machine,  # type: ignore[arg-type]
        settings=settings(
            max_examples=chosen.max_examples if LONG else EXAMPLES,
            stateful_step_count=chosen.stateful_step_count if LONG else STEPS,
            deadline=None,
            database=None,
        ),
    )
