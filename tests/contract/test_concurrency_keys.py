"""Store and worker contract: concurrency keys (ADR 0052). A job with a key runs only while fewer
than its limit of jobs with that key are running (claimed ahead included), on every worker; a job
held back stays pending with no attempt spent and keeps nobody else waiting; every way a running
attempt ends frees its slot; the limit comes from the caller, CONCURRENCY_LIMITS or the job type,
else 1, and a bad one is refused in one line with nothing written."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest
from pydantic import BaseModel
from sqlalchemy import Engine, func, select

from dominus.db.engine import create_database_engine
from dominus.errors import InvalidJobOptionError
from dominus.jobs import (
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.concurrency import parse_concurrency_limits
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.documents import JobOut
from dominus.jobs.model import (
    AttemptOutcome,
    Cancelled,
    Claim,
    Completed,
    Failed,
    Interrupted,
    NewJob,
    Returned,
    Snoozed,
)
from dominus.jobs.queues import parse_queue_option
from dominus.schema.tables import job_queue
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain
from tests.support.jobs import new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def keyed(
    key: str | None, limit: int | None = 1, *, priority: int = 0, seconds: float = 0
) -> NewJob:
    return replace(
        new_job(priority=priority, run_at_offset=seconds),
        concurrency_key=key,
        concurrency_limit=None if key is None else limit,
    )


def running_by_key(store: SqlJobStore) -> dict[str | None, int]:
    with store.engine.connect() as connection:
        rows = connection.execute(
            select(job_queue.c.concurrency_key, func.count())
            .where(job_queue.c.status == "running")
            .group_by(job_queue.c.concurrency_key)
        )
        return {key: count for key, count in rows}


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
    registry.register(
        "test.keyed",
        blocker,
        Gate,
        concurrency_key=lambda payload: f"gate:{payload['name'] or 'all'}",
        concurrency_limit=2,
    )
    return registry


# --- where the key and the limit come from ---------------------------------------------------


def test_the_limit_comes_from_the_call_the_setting_the_type_or_is_one(
    store: SqlJobStore, blocking_registry: HandlerRegistry, clock: FakeClock
) -> None:
    limits = parse_concurrency_limits("gate:=4, gate:x=3 ,backup=1,")
    queue = JobQueue(store, blocking_registry, clock=clock, concurrency_limits=limits)
    given = queue.enqueue_job("diag.noop", concurrency_key="gate:x", concurrency_limit=7)
    longest_prefix = queue.enqueue_job("diag.noop", concurrency_key="gate:xy")
    shorter_prefix = queue.enqueue_job("diag.noop", concurrency_key="gate:y")
    no_prefix = queue.enqueue_job("diag.noop", concurrency_key="portfolio-rescore:main")
    typed = JobQueue(store, blocking_registry, clock=clock).enqueue_job("test.keyed")
    typed_with_setting = queue.enqueue_job("test.keyed", {"name": "x"})
    typed_limit_given = queue.enqueue_job("test.keyed", concurrency_limit=9)
    typed_key_given = queue.enqueue_job("test.keyed", concurrency_key="mine")
    plain = queue.enqueue_job("diag.noop")
    jobs = [
        store.get_job(result.job_id)
        for result in (
            given,
            longest_prefix,
            shorter_prefix,
            no_prefix,
            typed,
            typed_with_setting,
            typed_limit_given,
            typed_key_given,
            plain,
        )
    ]
    assert [(job.concurrency_key, job.concurrency_limit) for job in jobs] == [
        ("gate:x", 7),
        ("gate:xy", 3),
        ("gate:y", 4),
        ("portfolio-rescore:main", 1),
        ("gate:all", 2),
        ("gate:x", 3),
        ("gate:all", 9),
        ("mine", 1),
        (None, None),
    ]
    shown = JobOut.of(jobs[0]).model_dump(mode="json")
    assert (shown["concurrency_key"], shown["concurrency_limit"]) == ("gate:x", 7)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency_key": "k", "concurrency_limit": 0}, "between 1 and 10000, got 0"),
        ({"concurrency_key": "k", "concurrency_limit": -2}, "between 1 and 10000, got -2"),
        ({"concurrency_key": "k", "concurrency_limit": 1.5}, "must be a whole number"),
        ({"concurrency_key": "k", "concurrency_limit": True}, "must be a whole number"),
        ({"concurrency_key": "k", "concurrency_limit": 10_001}, "between 1 and 10000"),
        ({"concurrency_limit": 2}, "concurrency_limit needs a concurrency_key"),
        ({"concurrency_key": ""}, "printable ASCII characters without spaces"),
        ({"concurrency_key": "a b"}, "printable ASCII characters without spaces"),
        ({"concurrency_key": "é"}, "printable ASCII characters without spaces"),
        ({"concurrency_key": "a\n"}, "printable ASCII characters without spaces"),
        ({"concurrency_key": "k" * 201}, "printable ASCII characters without spaces"),
    ],
)
def test_a_bad_key_or_limit_is_refused_in_one_line_and_nothing_is_written(
    store: SqlJobStore, queue: JobQueue, options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidJobOptionError) as refused:
        queue.enqueue_job("diag.noop", **options)  # type: ignore[arg-type]
    assert isinstance(refused.value, ValueError)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)
    assert store.list_jobs() == []


@pytest.mark.parametrize("setting", ["backup", "backup=0", "backup=-1", "backup=x", "a=1,a=2"])
def test_a_bad_concurrency_limits_setting_is_refused(setting: str) -> None:
    with pytest.raises(ValueError, match="CONCURRENCY_LIMITS"):
        parse_concurrency_limits(setting)


# --- the claim ---------------------------------------------------------------------------------


def test_a_key_at_its_limit_holds_its_jobs_back_without_spending_attempts(
    store: SqlJobStore,
) -> None:
    # The keyed jobs come first in claim order; the others must not wait behind them.
    held = [r.job_id for r in store.enqueue([keyed("k", priority=9) for _ in range(3)], T0)]
    pair = [r.job_id for r in store.enqueue([keyed("two", 2, priority=5) for _ in range(3)], T0)]
    plain = [r.job_id for r in store.enqueue([keyed(None) for _ in range(3)], T0)]
    claimed = store.claim("w1", ["diag.noop"], 10, T0)
    assert [job.id for job in claimed] == [held[0], *pair[:2], *plain]
    assert store.claim("w2", ["diag.noop"], 10, T0) == []
    for job_id in [*held[1:], pair[2]]:
        job = store.get_job(job_id)
        assert (job.status, job.attempts, job.locked_by) == (JobStatus.PENDING, 0, None)
    assert running_by_key(store) == {"k": 1, "two": 2, None: 3}
    # A slot freed: the next job of that key, and only one.
    store.settle([Completed(claimed[0].claim)], T0)
    [next_one] = store.claim("w2", ["diag.noop"], 10, T0)
    assert next_one.id == held[1]


def test_a_claim_takes_what_each_key_has_free_in_claim_order(store: SqlJobStore) -> None:
    ids = [
        r.job_id
        for r in store.enqueue(
            [
                keyed("a", 3, seconds=0),
                keyed("b", 1, seconds=1),
                keyed("a", 3, seconds=2),
                keyed("a", 3, seconds=3),
                keyed("a", 3, seconds=4),
                keyed(None, seconds=5),
            ],
            T0,
        )
    ]
    now = T0 + timedelta(seconds=10)
    first = store.claim("w1", ["diag.noop"], 2, now)
    assert [job.id for job in first] == ids[:2]
    second = store.claim("w2", ["diag.noop"], 10, now)
    assert [job.id for job in second] == [ids[2], ids[3], ids[5]]  # a: 3 of 3; b: 1 of 1
    assert running_by_key(store) == {"a": 3, "b": 1, None: 1}


def test_the_smallest_limit_among_a_keys_running_jobs_holds(store: SqlJobStore) -> None:
    loose, strict = (r.job_id for r in store.enqueue([keyed("k", 3), keyed("k", 1)], T0))
    [first] = store.claim("w1", ["diag.noop"], 1, T0)
    assert first.id == loose
    # The next job allows only one of the key at once: it waits for the first to end.
    assert store.claim("w1", ["diag.noop"], 5, T0) == []
    store.settle([Completed(first.claim)], T0)
    [second] = store.claim("w1", ["diag.noop"], 5, T0)
    assert second.id == strict


def test_thousands_pending_on_one_key_neither_block_nor_are_walked(store: SqlJobStore) -> None:
    store.enqueue([keyed("bulk", priority=9) for _ in range(3000)], T0)
    later = [r.job_id for r in store.enqueue([keyed("other", priority=1), keyed(None)], T0)]
    for worker in range(5):
        claimed = store.claim(f"w{worker}", ["diag.noop"], 10, T0)
        if worker == 0:
            assert [job.concurrency_key for job in claimed] == ["bulk", "other", None]
            assert [job.id for job in claimed[1:]] == later
        else:
            assert claimed == []
    assert running_by_key(store) == {"bulk": 1, "other": 1, None: 1}


def test_named_queues_and_pauses_apply_to_keyed_jobs(store: SqlJobStore, clock: FakeClock) -> None:
    mail, other = (
        r.job_id
        for r in store.enqueue(
            [replace(keyed("k"), queue="mail"), replace(keyed("k2"), queue="other")], T0
        )
    )
    store.pause_queue("mail", clock())
    assert store.claim("w1", ["diag.noop"], 5, T0, queues=["mail"]) == []
    store.resume_queue("mail", clock())
    [job] = store.claim("w1", ["diag.noop"], 5, T0, queues=["mail"])
    assert job.id == mail
    assert store.get_job(other).status is JobStatus.PENDING


def _ends(claim: Claim, how: str) -> AttemptOutcome:
    later = T0 + timedelta(seconds=1)
    outcomes: dict[str, AttemptOutcome] = {
        "complete": Completed(claim),
        "fail with a retry": Failed(claim, error="boom", retry_at=T0),
        "fail for good": Failed(claim, error="boom", permanent=True),
        "cancel": Cancelled(claim),
        "release at shutdown": Interrupted(claim, requeue=True),
        "cancel at shutdown": Interrupted(claim, requeue=False),
        "hand back unstarted": Returned(claim, why="test"),
        "snooze": Snoozed(claim, run_at=later, seconds=1),
    }
    return outcomes[how]


@pytest.mark.parametrize(
    "how",
    [
        "complete",
        "fail with a retry",
        "fail for good",
        "cancel",
        "release at shutdown",
        "cancel at shutdown",
        "hand back unstarted",
        "snooze",
    ],
)
def test_every_end_of_a_running_attempt_frees_its_slot_once(store: SqlJobStore, how: str) -> None:
    first, second, third = (r.job_id for r in store.enqueue([keyed("k") for _ in range(3)], T0))
    [running] = store.claim("w1", ["diag.noop"], 5, T0)
    assert running.id == first
    assert store.settle([_ends(running.claim, how)], T0) == ([True], [])
    # The slot is free: exactly one job of the key runs next (the first again if it went back).
    [next_one] = store.claim("w2", ["diag.noop"], 5, T0)
    assert next_one.id in (first, second)
    assert running_by_key(store) == {"k": 1}
    # Settling the old claim again changes nothing (the fence): still one running.
    store.settle([_ends(running.claim, how)], T0)
    assert store.claim("w3", ["diag.noop"], 5, T0) == []
    assert store.get_job(third).status is JobStatus.PENDING


def test_a_reclaim_frees_the_slot_of_a_silent_or_dead_worker(store: SqlJobStore) -> None:
    store.enqueue([keyed("k") for _ in range(3)], T0)
    [stale] = store.claim("silent", ["diag.noop"], 5, T0)
    later = T0 + timedelta(seconds=100)
    assert store.claim("w2", ["diag.noop"], 5, later) == []
    [reclaimed] = store.reclaim_stale(later, 10, lambda _type, _attempt: 0.0)
    assert reclaimed.job_id == stale.id
    [from_silent] = store.claim("w2", ["diag.noop"], 5, later)
    assert store.claim("w3", ["diag.noop"], 5, later) == []
    # A worker found dead (its liveness lock free): the same.
    store.reclaim_from_dead(["w2"], later, lambda _type, _attempt: 0.0)
    assert store.get_job(from_silent.id).status is JobStatus.PENDING
    [after_death] = store.claim("w3", ["diag.noop"], 5, later)
    assert running_by_key(store) == {"k": 1}
    assert after_death.concurrency_key == "k"


# --- workers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2])
def test_several_workers_never_run_more_than_the_limit(
    store: SqlJobStore,
    blocking_registry: HandlerRegistry,
    blocker: Blocker,
    clock: FakeClock,
    limit: int,
) -> None:
    queue = JobQueue(store, blocking_registry, clock=clock)
    for index in range(6):
        queue.enqueue_job(
            "test.block", {"name": f"k{index}"}, concurrency_key="k", concurrency_limit=limit
        )
    free = [queue.enqueue_job("test.block", {"name": f"free{n}"}).job_id for n in range(2)]
    config = WorkerConfig(concurrency=3, max_prefetch=4)
    workers = [Worker(store, blocking_registry, config, clock=clock) for _ in range(3)]
    for worker in workers:
        worker.run_once(clock())
    assert running_by_key(store) == {"k": limit, None: 2}
    assert [store.get_job(job_id).status for job_id in free] == [JobStatus.RUNNING] * 2
    blocker.release.set()
    for _ in range(4):
        for worker in workers:
            drain(worker, clock=clock)
    assert store.list_jobs(status=JobStatus.PENDING) == []
    assert len(blocker.started) == 8


def test_a_worker_that_names_queues_respects_keys(
    store: SqlJobStore, blocking_registry: HandlerRegistry, blocker: Blocker, clock: FakeClock
) -> None:
    queue = JobQueue(store, blocking_registry, clock=clock)
    for _ in range(3):
        for name in ("a", "b"):
            queue.enqueue_job("test.block", {"name": name}, queue=name, concurrency_key="shared")
    config = WorkerConfig(concurrency=4, queues=parse_queue_option(["a=2", "b"]))
    Worker(store, blocking_registry, config, clock=clock).run_once(clock())
    assert running_by_key(store) == {"shared": 1}


@pytest.fixture
def other_engine(database_url: str) -> Iterator[Engine]:
    engine = create_database_engine(database_url)
    yield engine
    engine.dispose()


def test_claimers_on_many_threads_never_exceed_a_keys_limit(
    store: SqlJobStore, other_engine: Engine
) -> None:
    """Eight claimers at once, each on connections of its own, claiming and completing: no
    committed state ever has more running jobs of a key than its limit."""
    limits = {"one": 1, "two": 2, "three": 3}
    jobs = [keyed(key, limit) for key, limit in limits.items() for _ in range(40)]
    jobs += [keyed(None) for _ in range(40)]
    random.Random(7).shuffle(jobs)
    store.enqueue(jobs, T0)
    stores = [store, SqlJobStore(other_engine)]
    seen: list[dict[str | None, int]] = []
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def claimer(index: int) -> None:
        mine, rng = stores[index % 2], random.Random(index)
        try:
            start.wait(30)
            for _ in range(30):
                claimed = mine.claim(f"w{index}", ["diag.noop"], rng.randint(1, 4), T0)
                seen.append(running_by_key(mine))
                if claimed:
                    mine.settle([Completed(job.claim) for job in claimed], T0)
        except BaseException as error:  # reported by the test's own thread
            failures.append(error)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failures == []
    assert seen
    for counts in seen:
        for key, limit in limits.items():
            assert counts.get(key, 0) <= limit, counts
    assert max(counts.get("three", 0) for counts in seen) >= 1
