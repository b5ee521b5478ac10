"""Store and worker contract: named queues. A job waits in a queue (`default` unless its caller
or its type names another); a worker takes every queue or the ones it names, each within its
share; a paused queue is claimed by nobody, on any host, until it is resumed; running jobs
finish; jobs claimed ahead of a paused queue are handed back unstarted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest
from pydantic import BaseModel
from sqlalchemy import Engine

from dominus.db.engine import create_database_engine
from dominus.errors import InvalidJobOptionError
from dominus.jobs import (
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.queues import QueueShares, parse_queue_option
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain, wait_until_idle
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


class Gate(BaseModel):
    name: str = ""


class Blocker:
    """A handler that holds its job until the test lets it go."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started: list[str] = []

    def __call__(self, payload: Gate, _context: JobContext) -> str:
        self.started.append(payload.name)
        self.release.wait(30)
        return payload.name


@pytest.fixture
def blocker() -> Iterator[Blocker]:
    gate = Blocker()
    yield gate
    gate.release.set()  # never leave a pool thread waiting


@pytest.fixture
def blocking_registry(blocker: Blocker) -> HandlerRegistry:
    registry = register_diagnostic_jobs(HandlerRegistry())
    registry.register("test.block", blocker, Gate)
    registry.register("test.housekeeping", lambda _p, _c: None, Gate, queue="maintenance")
    return registry


@pytest.fixture
def second_host(database_url: str) -> Iterator[SqlJobStore]:
    """Another process's store on the same database: its own engine and connections."""
    engine: Engine = create_database_engine(database_url)
    yield SqlJobStore(engine)
    engine.dispose()


def statuses(store: SqlJobStore, job_ids: list[int]) -> list[JobStatus]:
    return [store.get_job(job_id).status for job_id in job_ids]


def test_a_job_goes_to_default_its_types_queue_or_the_one_named(
    store: SqlJobStore, blocking_registry: HandlerRegistry, clock: FakeClock
) -> None:
    queue = JobQueue(store, blocking_registry, clock=clock)
    plain = queue.enqueue_job("diag.noop").job_id
    housekeeping = queue.enqueue_job("test.housekeeping").job_id
    named = queue.enqueue_job("diag.noop", queue="mail.out-1").job_id
    overridden = queue.enqueue_job("test.housekeeping", queue="urgent").job_id
    assert [store.get_job(job_id).queue for job_id in (plain, housekeeping, named, overridden)] == [
        "default",
        "maintenance",
        "mail.out-1",
        "urgent",
    ]


@pytest.mark.parametrize("bad", ["", "Mail", "a b", "x" * 65, "é", "mail/out", "a\n"])
def test_a_bad_queue_name_is_refused_in_one_line_and_nothing_is_written(
    store: SqlJobStore, queue: JobQueue, bad: str
) -> None:
    with pytest.raises(InvalidJobOptionError) as refused:
        queue.enqueue_job("diag.noop", queue=bad)
    assert "queue must be 1 to 64 characters" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert store.list_jobs() == []


def test_a_claim_from_named_queues_takes_only_theirs_in_claim_order(store: SqlJobStore) -> None:
    jobs = [
        replace(new_job(priority=1), queue="a"),
        replace(new_job(priority=5), queue="b"),
        replace(new_job(priority=9), queue="c"),
        replace(new_job(priority=3), queue="a"),
        new_job(priority=7),
    ]
    ids = [result.job_id for result in store.enqueue(jobs, T0)]
    claimed = store.claim("w1", ["diag.noop"], 10, T0, queues=["a", "b"])
    assert [job.id for job in claimed] == [ids[1], ids[3], ids[0]]
    assert store.claim("w1", ["diag.noop"], 10, T0, queues=["a"]) == []
    [default] = store.claim("w2", ["diag.noop"], 1, T0, queues=["default"])
    assert default.id == ids[4]
    [c] = store.claim("w3", ["diag.noop"], 10, T0)  # every queue: what is left
    assert c.id == ids[2]


def test_a_worker_with_queues_takes_only_those(
    store: SqlJobStore, queue: JobQueue, registry: HandlerRegistry, clock: FakeClock
) -> None:
    mine = [queue.enqueue_job("diag.noop", queue=name).job_id for name in ("a", "b", "a")]
    other = [queue.enqueue_job("diag.noop", queue=name).job_id for name in ("default", "c")]
    config = WorkerConfig(concurrency=2, queues=parse_queue_option(["a", "b"]))
    assert drain(Worker(store, registry, config, clock=clock), clock=clock) == 3
    assert statuses(store, mine) == [JobStatus.COMPLETED] * 3
    assert statuses(store, other) == [JobStatus.PENDING] * 2
    assert drain(Worker(store, registry, WorkerConfig(), clock=clock), clock=clock) == 2


def test_shares_cap_each_queue_and_the_rest_share_what_is_left(
    store: SqlJobStore, blocking_registry: HandlerRegistry, blocker: Blocker, clock: FakeClock
) -> None:
    queue = JobQueue(store, blocking_registry, clock=clock)
    for index in range(4):
        for name in ("a", "b", "c"):
            queue.enqueue_job("test.block", {"name": f"{name}{index}"}, queue=name)
    shares = parse_queue_option(["a=1", "b", "c"])
    worker = Worker(
        store, blocking_registry, WorkerConfig(concurrency=4, queues=shares), clock=clock
    )
    worker.run_once(clock())
    running = store.list_jobs(status=JobStatus.RUNNING)
    by_queue = sorted(job.queue for job in running)
    # a: its share of 1; b and c: the 3 slots left, in claim order (a0 b0 c0 b1 c1 ...).
    assert by_queue == ["a", "b", "b", "c"]
    clock.advance(1)
    worker.wake()
    worker.run_once(clock())  # nothing is free: nothing more claimed
    assert len(store.list_jobs(status=JobStatus.RUNNING)) == 4
    blocker.release.set()
    assert drain(worker, clock=clock) == 8
    assert store.list_jobs(status=JobStatus.PENDING) == []


def test_shares_over_the_concurrency_are_refused() -> None:
    with pytest.raises(
        InvalidJobOptionError, match=r"add up to 5, more than the worker's concurrency 4"
    ):
        WorkerConfig(concurrency=4, queues=parse_queue_option(["a=2", "b=3"]))
    with pytest.raises(InvalidJobOptionError, match="whole number of at least 1"):
        parse_queue_option(["a=0"])
    with pytest.raises(InvalidJobOptionError, match="named twice"):
        parse_queue_option(["a", "a=1"])
    assert parse_queue_option([]) == QueueShares({})


def test_a_pause_stops_claims_on_every_host_until_resumed(
    store: SqlJobStore,
    second_host: SqlJobStore,
    registry: HandlerRegistry,
    clock: FakeClock,
) -> None:
    here = JobQueue(store, registry, clock=clock)
    there = JobQueue(second_host, registry, clock=clock)
    paused_jobs = [here.enqueue_job("diag.noop", queue="mail").job_id for _ in range(3)]
    paused_jobs.append(there.enqueue_job("diag.noop", queue="mail").job_id)
    free_job = there.enqueue_job("diag.noop").job_id
    state = store.pause_queue("mail", clock())
    assert (state.name, state.paused, state.pending) == ("mail", True, 4)
    assert second_host.paused_queues() == {"mail"}
    # Neither host claims the paused queue's due jobs, whether it names it or takes every queue.
    assert second_host.claim("w2", ["diag.noop"], 10, T0, queues=["mail"]) == []
    worker_there = Worker(second_host, registry, WorkerConfig(concurrency=4), clock=clock)
    assert drain(worker_there, clock=clock) == 1
    worker_here = Worker(
        store, registry, WorkerConfig(queues=parse_queue_option(["mail"])), clock=clock
    )
    assert drain(worker_here, clock=clock) == 0
    assert statuses(store, paused_jobs) == [JobStatus.PENDING] * 4
    assert store.get_job(free_job).status is JobStatus.COMPLETED
    [mail] = [state for state in second_host.list_queues() if state.name == "mail"]
    assert (mail.paused, mail.pending, mail.running) == (True, 4, 0)
    assert store.pause_queue("mail", clock()).paused  # pausing again changes nothing
    # Resumed on the other host: claimed again everywhere.
    assert not second_host.resume_queue("mail", clock()).paused
    assert drain(worker_here, clock=clock) == 4
    assert statuses(store, paused_jobs) == [JobStatus.COMPLETED] * 4


def test_running_jobs_finish_when_their_queue_is_paused(
    store: SqlJobStore, blocking_registry: HandlerRegistry, blocker: Blocker, clock: FakeClock
) -> None:
    queue = JobQueue(store, blocking_registry, clock=clock)
    running = queue.enqueue_job("test.block", {"name": "first"}, queue="mail").job_id
    worker = Worker(store, blocking_registry, WorkerConfig(concurrency=2), clock=clock)
    worker.run_once(clock())
    assert store.get_job(running).status is JobStatus.RUNNING
    store.pause_queue("mail", clock())
    waiting = queue.enqueue_job("test.block", {"name": "second"}, queue="mail").job_id
    blocker.release.set()
    assert wait_until_idle(worker, 30)
    drain(worker, clock=clock)
    assert store.get_job(running).status is JobStatus.COMPLETED
    assert store.get_job(waiting).status is JobStatus.PENDING
    assert blocker.started == ["first"]


def test_jobs_claimed_ahead_of_a_paused_queue_go_back_unstarted(
    store: SqlJobStore, blocking_registry: HandlerRegistry, blocker: Blocker, clock: FakeClock
) -> None:
    queue = JobQueue(store, blocking_registry, clock=clock)
    config = WorkerConfig(
        concurrency=1,
        max_prefetch=3,
        prefetch_window_seconds=1000,
        cancel_check_interval_seconds=0.1,
    )
    worker = Worker(store, blocking_registry, config, clock=clock)
    queue.enqueue_job("diag.noop")
    assert drain(worker, clock=clock) == 1  # a run time observed: the worker claims ahead now
    slow = queue.enqueue_job("test.block", {"name": "slow"}, priority=10).job_id
    ahead = [queue.enqueue_job("diag.noop", queue="mail").job_id for _ in range(3)]
    worker.wake()
    assert worker.run_once(clock()).claimed == 4  # the slow one runs, three wait behind it
    store.pause_queue("mail", clock())
    clock.advance(0.2)
    worker.run_once(clock())  # the cancel check sees the pause and hands them back
    worker.run_once(clock())  # ... and the settle records it
    for job_id in ahead:
        job = store.get_job(job_id)
        assert (job.status, job.attempts) == (JobStatus.PENDING, 0)
        assert store.job_events(job_id)[-1].kind is EventKind.RELEASED
        assert "queue 'mail' was paused" in (store.job_events(job_id)[-1].message or "")
    blocker.release.set()
    drain(worker, clock=clock)
    assert store.get_job(slow).status is JobStatus.COMPLETED
    assert statuses(store, ahead) == [JobStatus.PENDING] * 3
    store.resume_queue("mail", clock())
    clock.advance(1)
    assert drain(worker, clock=clock) == 3
    assert [store.get_job(job_id).attempts for job_id in ahead] == [1, 1, 1]


def test_queue_stats_show_each_queue(store: SqlJobStore, queue: JobQueue, clock: FakeClock) -> None:
    queue.enqueue_job("diag.noop", queue="mail")
    queue.enqueue_job("diag.noop")
    store.claim("w1", ["diag.noop"], 1, T0 + timedelta(seconds=1), queues=["mail"])
    store.pause_queue("idle", clock())
    stats = store.queue_stats(clock(), alive_since=T0)
    assert [(q.name, q.paused, q.pending, q.running) for q in stats.queues] == [
        ("default", False, 1, 0),
        ("idle", True, 0, 0),
        ("mail", False, 0, 1),
    ]
