"""Stateful property test of a job's `rate_key` (hypothesis `RuleBasedStateMachine`, ADR 0053's
addendum), on SQLite and on PostgreSQL.

Eight workers claim, complete, fail and crash (a crashed worker's jobs stay running until the
fake clock passes the max running age and a reaper takes them back), while jobs with random rate
keys (or none) are enqueued and time moves by random steps. After every step:

- the claims' grants of each key never number more than its limit in any window of its period
  (the times the store handed a keyed job to a worker, as the workers saw them);
- each claim took exactly what a reference model of the limiter says: in claim order, the due
  jobs up to the claim's limit, a keyed one only while its key has a slot a whole period old;
- a job refused a token went back to pending, due later than now, its attempt unspent;
- the store agrees with the model on every job's status and attempts.

The clock is the test's own, so on PostgreSQL the store stamps tokens with it rather than with
the server's clock (`server_clock=False`; test_rate_limit_server_clock.py covers the server's).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import Engine, select

from dominus.jobs import JobStatus, Limiters, RateLimit, SqlJobStore
from dominus.jobs.model import NewJob
from dominus.jobs.sql.limits import RateLimitStore
from dominus.schema.tables import (
    dead_letter_jobs,
    job_events,
    job_metrics,
    job_queue,
    rate_limit_grants,
    rate_limits,
    workers,
)
from tests.support.keyed_machines import MAX_AGE, MAX_ATTEMPTS, WORKERS, ModelJob, WorkersMachine
from tests.support.rate_windows import most_in_a_window

EXAMPLES, STEPS = 30, 50
LONG = settings().max_examples > EXAMPLES

JOB_TYPE = "prop.rated"
LIMITS = {"rate:a": RateLimit(1, 1.0), "rate:b": RateLimit(2, 1.0), "rate:c": RateLimit(3, 2.0)}
KEYS = (None, *LIMITS)
# A slot never taken: configured slots start at the epoch.
NEVER = datetime(1970, 1, 1, tzinfo=UTC)
TABLES = (
    job_events,
    dead_letter_jobs,
    job_metrics,
    job_queue,
    workers,
    rate_limit_grants,
    rate_limits,
)


@dataclass
class ModelLimiter:
    """A key's N slots, each the time of one of its N latest tokens (ADR 0053)."""

    limit: RateLimit
    slots: list[datetime] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.slots = [NEVER] * self.limit.count

    def take(self, wanted: int, now: datetime) -> int:
        """Take up to `wanted` slots a whole period old, oldest first; how many."""
        period = timedelta(seconds=self.limit.period_seconds)
        taken = 0
        for index in sorted(range(len(self.slots)), key=lambda i: self.slots[i]):
            if taken == wanted or self.slots[index] > now - period:
                break
            self.slots[index] = now
            taken += 1
        return taken


class RateKeysMachine(WorkersMachine):
    def __init__(self, store: SqlJobStore, limits: RateLimitStore) -> None:
        super().__init__(store, TABLES)
        limiters = Limiters(limits, self.clock)
        for key, limit in LIMITS.items():
            limiters.configure(key, limit)
        self.limiters = {key: ModelLimiter(limit) for key, limit in LIMITS.items()}
        self.granted: dict[str, list[datetime]] = {key: [] for key in LIMITS}

    # --- the model ---------------------------------------------------------------------------
    def _expected_claim(self, limit: int) -> tuple[list[int], list[int]]:
        """The jobs this claim runs and those it hands back, by the model."""
        now = self.clock()
        due = sorted(
            (
                job
                for job in self.jobs.values()
                if job.status is JobStatus.PENDING and job.run_at <= now
            ),
            key=lambda job: (job.run_at, job.id),
        )[:limit]
        wanted = Counter(job.key for job in due if job.key is not None)
        tokens = {key: self.limiters[key].take(count, now) for key, count in wanted.items()}
        runs, held = [], []
        for job in due:
            if job.key is None or tokens[job.key] > 0:
                runs.append(job.id)
                if job.key is not None:
                    tokens[job.key] -= 1
            else:
                held.append(job.id)
        return runs, held

    def _run_at(self, job_id: int) -> datetime:
        return self.store.get_job(job_id).run_at

    # --- callers and time --------------------------------------------------------------------
    @initialize(keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=8))
    def first_jobs(self, keys: list[str | None]) -> None:
        self.enqueue(keys)

    @rule(keys=st.lists(st.sampled_from(KEYS), min_size=1, max_size=6))
    def enqueue(self, keys: list[str | None]) -> None:
        now = self.clock()
        jobs = [NewJob(JOB_TYPE, {}, 0, MAX_ATTEMPTS, now, rate_key=key) for key in keys]
        for key, result in zip(keys, self.store.enqueue(jobs, now), strict=True):
            self.jobs[result.job_id] = ModelJob(result.job_id, key, run_at=now)

    @rule(seconds=st.sampled_from([0.1, 0.25, 0.5, 1.0, MAX_AGE / 2]))
    def tick(self, seconds: float) -> None:
        self.clock.advance(seconds)

    # --- workers -----------------------------------------------------------------------------
    @rule(worker=st.sampled_from(WORKERS), limit=st.integers(1, 6))
    def claim(self, worker: str, limit: int) -> None:
        now = self.clock()
        runs, held = self._expected_claim(limit)
        claimed = list(self.store.claim(worker, [JOB_TYPE], limit, now))
        assert sorted(job.id for job in claimed) == sorted(runs)
        for row in claimed:
            job = self.jobs[row.id]
            job.status, job.owner, job.heartbeat_at = JobStatus.RUNNING, worker, now
            job.attempts += 1
            self.held[worker].add(row.claim)
            if job.key is not None:
                self.granted[job.key].append(now)
        for job_id in held:
            run_at = self._run_at(job_id)
            assert run_at > now, (job_id, run_at, now)
            self.jobs[job_id].run_at = run_at

    # --- invariants --------------------------------------------------------------------------
    @invariant()
    def no_key_above_its_limit_in_any_window(self) -> None:
        for key, limit in LIMITS.items():
            period = timedelta(seconds=limit.period_seconds)
            assert most_in_a_window(self.granted[key], period) <= limit.count, key

    @invariant()
    def the_store_agrees(self) -> None:
        with self.store.engine.connect() as connection:
            rows = connection.execute(
                select(job_queue.c.id, job_queue.c.status, job_queue.c.attempts)
            ).all()
        assert {row.id for row in rows} == set(self.jobs)
        for row in rows:
            job = self.jobs[row.id]
            assert (JobStatus(row.status), row.attempts) == (job.status, job.attempts), (row, job)


@pytest.mark.timeout(3600 if LONG else 900)
@pytest.mark.backends("sqlite", "postgresql")
def test_no_rate_key_ever_grants_more_than_its_limit(engine: Engine) -> None:
    # One store for every example: a store keeps driver connections of its own, and one per
    # example would hold hundreds open on PostgreSQL.
    store = SqlJobStore(engine, server_clock=False)
    limits = RateLimitStore(engine, server_clock=False)
    machine = lambda: RateKeysMachine(store, limits)  # noqa: E731
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
