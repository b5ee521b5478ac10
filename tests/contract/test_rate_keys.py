"""A job's `rate_key` (ADR 0053, addendum), on SQLite and PostgreSQL: each claim takes a token of
the key's limiter or hands the job back to pending, due when a token frees, its attempt unspent
and not counted as running; claim starts never exceed the limit in any window of its period; a
paused key holds its jobs and `resume` makes them due at once (and the jobs a handler's
RateLimited snoozed); a key with no limit configured is unlimited; an attempt reclaimed after
its worker died keeps the token it took, and its rerun takes one more, never two."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine, select

from dominus.errors import InvalidJobOptionError
from dominus.jobs import (
    EventKind,
    HandlerRegistry,
    JobQueue,
    JobStatus,
    Limiters,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.documents import JobOut
from dominus.jobs.model import Claim, ClaimRequest, NewJob, Snoozed, held_until
from dominus.schema.tables import rate_limit_grants
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain
from tests.support.jobs import kinds, new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")

KEY = "api:rates.example.test"


def rated(
    key: str | None = KEY, *, seconds: float = 0, concurrency_key: str | None = None
) -> NewJob:
    job = replace(new_job(run_at_offset=seconds), payload={}, rate_key=key)
    if concurrency_key is None:
        return job
    return replace(job, concurrency_key=concurrency_key, concurrency_limit=1)


# These tests move a fake clock by hand, so the tokens and grants are stamped with it on
# PostgreSQL too (`server_clock=False`), not with the server's clock as by default:
# test_rate_limit_server_clock.py covers that.
@pytest.fixture
def store(engine: Engine) -> SqlJobStore:
    return SqlJobStore(engine, server_clock=False)


@pytest.fixture
def limiters(engine: Engine, clock: FakeClock) -> Limiters:
    return Limiters.over(engine, clock, server_clock=False)


def grant_stamps(engine: Engine, key: str = KEY) -> list[int]:
    with engine.connect() as connection:
        rows = connection.execute(
            select(rate_limit_grants.c.granted_us)
            .where(rate_limit_grants.c.key == key)
            .order_by(rate_limit_grants.c.granted_us)
        )
        return [row[0] for row in rows]


# --- enqueue -------------------------------------------------------------------------------------


def test_the_rate_key_is_stored_and_shown(queue: JobQueue, store: SqlJobStore) -> None:
    job = store.get_job(queue.enqueue_job("diag.noop", rate_key=KEY).job_id)
    assert job.rate_key == KEY
    assert JobOut.of(job).model_dump(mode="json")["rate_key"] == KEY
    assert store.get_job(queue.enqueue_job("diag.noop").job_id).rate_key is None


@pytest.mark.parametrize("key", ["", "a b", "a/b", "é", "k" * 201])
def test_a_bad_rate_key_is_refused_in_one_line_and_nothing_is_written(
    queue: JobQueue, store: SqlJobStore, key: str
) -> None:
    with pytest.raises(InvalidJobOptionError, match="rate_key must be") as refused:
        queue.enqueue_job("diag.noop", rate_key=key)
    assert "\n" not in str(refused.value)
    assert store.list_jobs() == []


# --- the claim -----------------------------------------------------------------------------------


def test_a_claim_takes_tokens_and_hands_the_rest_back_unspent(
    store: SqlJobStore, limiters: Limiters, engine: Engine
) -> None:
    limiters.configure(KEY, "3/10s")
    ids = [r.job_id for r in store.enqueue([rated() for _ in range(8)], T0)]
    plain = store.enqueue([rated(None)], T0)[0].job_id
    claimed = store.claim("w1", ["diag.noop"], 20, T0)
    assert sorted(job.id for job in claimed) == sorted([*ids[:3], plain])
    # The other five wait for the three slots to free, spread over the coming periods.
    assert held_until(claimed) == [T0 + timedelta(seconds=s) for s in (10, 10, 10, 20, 20)]
    for job_id, due in zip(ids[3:], (10, 10, 10, 20, 20), strict=True):
        job = store.get_job(job_id)
        assert (job.status, job.attempts, job.failure_count, job.locked_by) == (
            JobStatus.PENDING,
            0,
            0,
            None,
        )
        assert job.run_at == T0 + timedelta(seconds=due)
        assert kinds(store, job_id) == []  # held back as by a concurrency key: no event
    assert len(grant_stamps(engine)) == 3
    assert store.claim("w1", ["diag.noop"], 20, T0 + timedelta(seconds=9)) == []
    later = store.claim("w1", ["diag.noop"], 20, T0 + timedelta(seconds=10))
    assert sorted(job.id for job in later) == ids[3:6]


def test_claim_starts_never_exceed_the_limit_in_any_window(
    store: SqlJobStore, limiters: Limiters
) -> None:
    """Claims every 0.7 s through the worker loop's path (PostgreSQL: its second transaction)
    and through store.claim, by two workers, until all 20 jobs ran once."""
    limiters.configure(KEY, "3/5s")
    ids = [r.job_id for r in store.enqueue([rated(seconds=n % 4) for n in range(20)], T0)]
    starts: list[datetime] = []
    now = T0
    for tick in range(200):
        if tick % 2:
            claimed = store.settle([], now, claim_for=ClaimRequest("loop", ["diag.noop"], 4))[1]
        else:
            claimed = store.claim("other", ["diag.noop"], 4, now)
        starts += [now] * len(claimed)
        if len(starts) == len(ids):
            break
        now += timedelta(seconds=0.7)
    assert len(starts) == len(ids)
    for first in starts:
        window = [at for at in starts if first <= at < first + timedelta(seconds=5)]
        assert len(window) <= 3, (first, window)
    # Every job was claimed exactly once, with its first attempt: holding back spent none.
    assert {store.get_job(job_id).attempts for job_id in ids} == {1}


def test_a_held_back_job_does_not_count_as_running_for_its_concurrency_key(
    store: SqlJobStore, limiters: Limiters
) -> None:
    limiters.configure(KEY, "1/1min")
    limiters.try_acquire(KEY)  # the minute's token is gone
    held = store.enqueue([rated(concurrency_key="one")], T0)[0].job_id
    assert store.claim("w1", ["diag.noop"], 5, T0) == []
    other = store.enqueue([rated(None, concurrency_key="one", seconds=1)], T0)[0].job_id
    [claimed] = store.settle(
        [], T0 + timedelta(seconds=1), claim_for=ClaimRequest("w1", ["diag.noop"], 5)
    )[1]
    assert claimed.id == other
    assert store.get_job(held).status is JobStatus.PENDING


def test_a_key_without_a_limit_is_unlimited_but_honours_a_pause(
    store: SqlJobStore, limiters: Limiters
) -> None:
    ids = [r.job_id for r in store.enqueue([rated("never.configured") for _ in range(5)], T0)]
    assert sorted(job.id for job in store.claim("w1", ["diag.noop"], 10, T0)) == ids
    limiters.pause("never.configured", 30, "maintenance")
    waiting = store.enqueue([rated("never.configured")], T0)[0].job_id
    assert store.claim("w1", ["diag.noop"], 10, T0) == []
    assert store.get_job(waiting).run_at == T0 + timedelta(seconds=30)


# --- pauses and resume ---------------------------------------------------------------------------


def test_a_paused_key_holds_its_jobs_and_resume_releases_them(
    store: SqlJobStore, limiters: Limiters, clock: FakeClock
) -> None:
    limiters.configure(KEY, "100/s")
    limiters.pause(KEY, 3600, "429")
    ids = [r.job_id for r in store.enqueue([rated() for _ in range(4)], T0)]
    claimed = store.claim("w1", ["diag.noop"], 10, T0)
    assert claimed == [] and held_until(claimed) == [T0 + timedelta(hours=1)] * 4
    assert {store.get_job(job_id).run_at for job_id in ids} == {T0 + timedelta(hours=1)}
    clock.advance(5)
    state = limiters.resume(KEY)
    assert state.brought_forward == 4 and not state.paused
    assert {store.get_job(job_id).run_at for job_id in ids} == {clock()}
    assert sorted(job.id for job in store.claim("w1", ["diag.noop"], 10, clock())) == ids
    assert {store.get_job(job_id).attempts for job_id in ids} == {1}


def test_resume_brings_forward_the_jobs_a_handler_s_rate_limited_snoozed(
    store: SqlJobStore, limiters: Limiters, clock: FakeClock
) -> None:
    limiters.pause(KEY, 600, "429")
    store.enqueue([new_job(), new_job(), new_job()], T0)
    first, second, other = store.claim("w1", ["diag.noop"], 3, T0)
    wake = T0 + timedelta(seconds=600)
    store.settle(
        [
            Snoozed(first.claim, run_at=wake, seconds=600, rate_key=KEY),
            Snoozed(second.claim, run_at=wake, seconds=600, rate_key="another.key"),
            Snoozed(other.claim, run_at=wake, seconds=600),
        ],
        T0,
    )
    clock.advance(1)
    assert limiters.resume(KEY).brought_forward == 1
    assert [store.get_job(job.id).run_at for job in (first, second, other)] == [
        clock(),
        wake,
        wake,
    ]


# --- workers -------------------------------------------------------------------------------------


def test_a_worker_drains_rate_keyed_jobs_at_the_limit(
    store: SqlJobStore, engine: Engine, clock: FakeClock
) -> None:
    registry = register_diagnostic_jobs(HandlerRegistry())
    limiters = Limiters.over(engine, clock, server_clock=False)
    limiters.configure(KEY, "2/s")
    ids = [r.job_id for r in store.enqueue([rated() for _ in range(6)], T0)]
    worker = Worker(store, registry, WorkerConfig(concurrency=4), clock=clock, limiters=limiters)
    finished_by_second = []
    for _ in range(3):
        drain(worker, clock=clock)
        finished_by_second.append(
            sum(store.get_job(job_id).status is JobStatus.COMPLETED for job_id in ids)
        )
        clock.advance(1)
    assert finished_by_second == [2, 4, 6]
    assert {store.get_job(job_id).attempts for job_id in ids} == {1}
    assert all(kinds(store, job_id) == [] for job_id in ids)


def test_a_reclaimed_attempt_keeps_its_token_and_its_rerun_takes_one(
    store: SqlJobStore, limiters: Limiters, engine: Engine
) -> None:
    limiters.configure(KEY, "5/min")
    job_id = store.enqueue([rated()], T0)[0].job_id
    [job] = store.claim("killed", ["diag.noop"], 1, T0)
    assert len([s for s in grant_stamps(engine) if s > 0]) == 1
    # The worker was SIGKILLed: its heartbeat stops and the job is reclaimed, attempt spent.
    later = T0 + timedelta(seconds=120)
    [reclaimed] = store.reclaim_stale(later, 60, lambda _type, _attempt: 0)
    assert reclaimed.job_id == job_id
    rerun_at = reclaimed.retry_at
    [again] = store.claim("w2", ["diag.noop"], 1, max(rerun_at, later))
    assert (again.id, again.attempts) == (job_id, 2)
    # One token per attempt: the killed attempt's (spent, as it may have reached the service)
    # and the rerun's.
    assert len([s for s in grant_stamps(engine) if s > 0]) == 2
    assert EventKind.RECLAIMED in kinds(store, job_id)
    assert job.claim == Claim(job_id, "killed", 1)
