"""Rate limiters and pauses shared through the database (ADR 0053), on SQLite and PostgreSQL:
a key's grants never exceed its limit in a window of its period, whichever `Limiters` (each on
its own engine, as separate processes are) asks; a pause holds for every process, the later of
two pauses wins, resume ends it; a clock that jumps does not wedge a key; a handler's
RateLimited pauses the key and snoozes the job without spending its attempt; a wait ends on
the job's abort."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from pydantic import BaseModel
from sqlalchemy import Engine, text

from dominus.db.engine import create_database_engine
from dominus.errors import InvalidRateLimitError, JobAbortedError, RateLimitKeyNotFoundError
from dominus.jobs import (
    AbortReason,
    AbortSignal,
    EventKind,
    HandlerRegistry,
    JobContext,
    JobQueue,
    JobStatus,
    Limiters,
    RateLimit,
    RateLimited,
    SqlJobStore,
    Worker,
    WorkerConfig,
)
from dominus.jobs.clock import utc_now
from dominus.jobs.rate_limit import parse_rate_limits
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain
from tests.support.jobs import kinds

pytestmark = pytest.mark.backends("sqlite", "postgresql")

KEY = "rdap:rdap.example.test"


@pytest.fixture
def other_engine(database_url: str) -> Iterator[Engine]:
    """A second engine on the same database: what another process would hold."""
    engine = create_database_engine(database_url)
    yield engine
    engine.dispose()


# These tests move a fake clock by hand, so grants are stamped with it on PostgreSQL too
# (`server_clock=False`), not with the server's clock as by default:
# test_rate_limit_server_clock.py covers that.
@pytest.fixture
def limiters(engine: Engine, clock: FakeClock) -> Limiters:
    return Limiters.over(engine, clock, server_clock=False)


@pytest.fixture
def others(other_engine: Engine, clock: FakeClock) -> Limiters:
    return Limiters.over(other_engine, clock, server_clock=False)


def grants(limiters: Limiters, key: str, tries: int) -> list[float | None]:
    return [limiters.try_acquire(key) for _ in range(tries)]


def test_a_limit_holds_across_processes(
    limiters: Limiters, others: Limiters, clock: FakeClock
) -> None:
    limiters.configure(KEY, "3/10s")
    assert grants(limiters, KEY, 2) == [None, None]
    clock.advance(4)
    # The third grant is the other process's; then the window is full for both.
    assert grants(others, KEY, 2) == [None, 6.0]
    assert limiters.try_acquire(KEY) == 6.0
    clock.advance(6)  # the first two grants are a whole period old: two slots free
    assert grants(others, KEY, 1) + grants(limiters, KEY, 2) == [None, None, 4.0]
    clock.advance(4)
    assert grants(limiters, KEY, 2) == [None, 6.0]


def test_a_key_without_a_limit_grants_until_it_is_paused(
    limiters: Limiters, others: Limiters, clock: FakeClock
) -> None:
    assert grants(limiters, "free", 50) == [None] * 50
    others.pause("free", 30, "maintenance window")
    assert limiters.try_acquire("free") == 30.0
    clock.advance(30)
    assert limiters.try_acquire("free") is None


def test_a_pause_holds_for_every_process_until_it_ends(
    limiters: Limiters, others: Limiters, clock: FakeClock
) -> None:
    limiters.configure(KEY, "100/s")
    state = others.pause(KEY, 120, "429 Too Many Requests")
    assert (state.paused_until, state.pause_reason) == (
        T0 + timedelta(seconds=120),
        "429 Too Many Requests",
    )
    assert limiters.try_acquire(KEY) == 120.0
    [listed] = limiters.list()
    assert (listed.key, listed.paused, str(listed.limit)) == (KEY, True, "100/s")
    clock.advance(119.5)
    assert limiters.try_acquire(KEY) == 0.5
    clock.advance(0.5)
    assert limiters.try_acquire(KEY) is None
    assert limiters.list()[0].paused is False


def test_the_later_pause_wins_whatever_the_order(
    limiters: Limiters, others: Limiters, clock: FakeClock
) -> None:
    limiters.pause(KEY, 60, "long")
    kept = others.pause(KEY, 10, "short")
    assert (kept.paused_until, kept.pause_reason) == (T0 + timedelta(seconds=60), "long")
    longer = others.pause(KEY, T0 + timedelta(hours=1), "longer")
    assert (longer.paused_until, longer.pause_reason) == (T0 + timedelta(hours=1), "longer")
    clock.advance(3600)
    # Once a pause has passed, a new one starts from now, however short.
    renewed = limiters.pause(KEY, 5, "again")
    assert renewed.paused_until == clock() + timedelta(seconds=5)


def test_resume_ends_a_pause_early_and_an_unknown_key_is_not_found(
    limiters: Limiters, others: Limiters
) -> None:
    limiters.configure(KEY, "1/s")
    limiters.pause(KEY, 600, "provider down")
    state = others.resume(KEY)
    assert (state.paused, state.pause_reason, str(state.limit)) == (False, None, "1/s")
    assert limiters.try_acquire(KEY) is None
    with pytest.raises(RateLimitKeyNotFoundError):
        others.resume("never:seen")


def test_a_clock_set_back_waits_a_bounded_time_and_one_set_forward_grants(
    limiters: Limiters, clock: FakeClock
) -> None:
    limiters.configure(KEY, "2/10s")
    assert grants(limiters, KEY, 3) == [None, None, 10.0]
    clock.advance(-3)  # a small step back (NTP): the grants are 3 s ahead, so 13 s to wait
    assert limiters.try_acquire(KEY) == 13.0
    clock.advance(-7200)  # set back two hours: the slots are brought back to now
    assert limiters.try_acquire(KEY) == 10.0
    clock.advance(10)
    assert grants(limiters, KEY, 3) == [None, None, 10.0]
    clock.advance(86_400)  # set forward a day: every grant is old, the limit applies anew
    assert grants(limiters, KEY, 3) == [None, None, 10.0]


def test_shrinking_a_limit_keeps_the_latest_grants(limiters: Limiters, clock: FakeClock) -> None:
    limiters.configure(KEY, "4/10s")
    assert grants(limiters, KEY, 2) == [None, None]
    clock.advance(5)
    assert grants(limiters, KEY, 2) == [None, None]
    limiters.configure(KEY, "2/10s")
    # The two kept are the grants of 5 s ago: nothing until they are a period old.
    assert limiters.try_acquire(KEY) == 10.0
    limiters.configure(KEY, "3/10s")
    assert grants(limiters, KEY, 2) == [None, 10.0]


@pytest.mark.backends("postgresql")
def test_a_limit_of_thousands_refreshes_the_planners_statistics(
    limiters: Limiters, engine: Engine
) -> None:
    """A take walks the key's slots in `granted_us` order to the first free few; with the
    statistics of an empty table the planner sorts every slot instead (ten times the work)."""
    limiters.configure(KEY, "5000/s")
    with engine.connect() as connection:
        planned = connection.execute(
            text("SELECT reltuples FROM pg_class WHERE relname = 'rate_limit_grants'")
        ).scalar_one()
    assert planned >= 5000


@pytest.mark.parametrize(
    ("text", "count", "period"),
    [("10/s", 10, 1.0), ("60/min", 60, 60.0), ("1/2s", 1, 2.0), ("5/0.5s", 5, 0.5)],
)
def test_limits_parse_from_text(text: str, count: int, period: float) -> None:
    assert RateLimit.parse(text) == RateLimit(count, period)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("0/s", "count must be 1 to"),
        ("-1/s", "count must be 1 to"),
        ("10/0s", "period must be more than 0"),
        ("10", "COUNT/PERIOD"),
        ("ten/s", "COUNT/PERIOD"),
        ("10/fortnight", "COUNT/PERIOD"),
        ("1/8d", "period must be more than 0 and at most"),
        ("100000/s", "count must be 1 to"),
    ],
)
def test_bad_limits_are_refused_in_one_line(limiters: Limiters, text: str, fragment: str) -> None:
    with pytest.raises(InvalidRateLimitError) as refused:
        limiters.configure(KEY, text)
    assert fragment in str(refused.value)
    assert "\n" not in str(refused.value)
    assert limiters.list() == []


@pytest.mark.parametrize("key", ["", "a b", "x" * 201, "a,b", "a=b", "a/b"])
def test_bad_keys_are_refused(limiters: Limiters, key: str) -> None:
    with pytest.raises(InvalidRateLimitError):
        limiters.pause(key, 10)
    assert limiters.list() == []


def test_the_setting_lists_keys_and_limits() -> None:
    assert parse_rate_limits(" rdap:a.test=10/s, whois:b.test = 1/2s ,") == {
        "rdap:a.test": RateLimit(10, 1),
        "whois:b.test": RateLimit(1, 2),
    }
    for bad, fragment in [("k=0/s", "count"), ("k", "KEY=LIMIT"), ("k=1/s,k=2/s", "twice")]:
        with pytest.raises(InvalidRateLimitError, match=fragment):
            parse_rate_limits(bad)


def test_a_deadline_raises_rate_limited_at_once(limiters: Limiters, clock: FakeClock) -> None:
    limiters.configure(KEY, "1/60s")
    limiters.acquire(KEY, deadline_seconds=0)
    with pytest.raises(RateLimited) as limited:
        limiters.acquire(KEY, deadline_seconds=30)
    assert (limited.value.key, limited.value.retry_after_seconds) == (KEY, 60.0)
    assert clock() == T0  # it did not wait for the deadline to pass


class AdvancingStop:
    """A stop signal whose waits move the fake clock instead of sleeping."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.waited: list[float] = []

    def is_set(self) -> bool:
        return False

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None
        self.waited.append(timeout)
        self.clock.advance(timeout)
        return False


def test_acquire_waits_through_a_pause(limiters: Limiters, clock: FakeClock) -> None:
    limiters.configure(KEY, "1/s")
    limiters.pause(KEY, 2.5, "429")
    stop = AdvancingStop(clock)
    limiters.acquire(KEY, stop)
    # Woken at least once a second to see an early resume, granted when the pause ended.
    assert stop.waited == [1.0, 1.0, 0.5]
    assert clock() == T0 + timedelta(seconds=2.5)


def test_a_wait_ends_when_its_stop_is_set(limiters: Limiters) -> None:
    limiters.pause(KEY, 3600, "down")
    abort = AbortSignal()
    waiting = threading.Event()
    errors: list[BaseException] = []

    def wait() -> None:
        waiting.set()
        try:
            limiters.acquire(KEY, abort)
        except JobAbortedError as error:
            errors.append(error)

    thread = threading.Thread(target=wait)
    thread.start()
    assert waiting.wait(30)
    abort.set(AbortReason.CANCELLED)
    thread.join(30)
    assert not thread.is_alive()
    assert len(errors) == 1 and KEY in str(errors[0])


# --- jobs ---------------------------------------------------------------------------------------
class Fetch(BaseModel):
    key: str = KEY
    retry_after: float | None = None  # raise RateLimited with it instead of acquiring


def limited_registry(calls: list[str]) -> HandlerRegistry:
    """`test.fetch` takes a grant of its key (no waiting) or raises RateLimited itself;
    `test.afetch` is its `async def` twin."""

    def fetch(payload: Fetch, context: JobContext) -> str:
        calls.append(payload.key)
        if payload.retry_after is not None:
            raise RateLimited(payload.key, payload.retry_after, "429 from the provider")
        context.limiter(payload.key).acquire(deadline_seconds=0)
        return "fetched"

    async def afetch(payload: Fetch, context: JobContext) -> str:
        calls.append(payload.key)
        if payload.retry_after is not None:
            raise RateLimited(payload.key, payload.retry_after, "429 from the provider")
        await context.limiter(payload.key).aacquire(deadline_seconds=0)
        return "fetched"

    registry = HandlerRegistry()
    registry.register("test.fetch", fetch, Fetch, max_attempts=1)
    registry.register("test.afetch", afetch, Fetch, max_attempts=1)
    return registry


@pytest.mark.parametrize("job_type", ["test.fetch", "test.afetch"])
def test_rate_limited_from_a_handler_pauses_the_key_and_snoozes_the_job(
    store: SqlJobStore,
    limiters: Limiters,
    others: Limiters,
    clock: FakeClock,
    job_type: str,
) -> None:
    calls: list[str] = []
    registry = limited_registry(calls)
    queue = JobQueue(store, registry, clock=clock)
    job_id = queue.enqueue_job(job_type, {"retry_after": 90}).job_id
    worker = Worker(store, registry, WorkerConfig(concurrency=1), clock=clock, limiters=limiters)
    drain(worker, clock=clock)
    job = store.get_job(job_id)
    # max_attempts is 1: had the attempt been spent, the job would be dead-lettered.
    assert (job.status, job.attempts, job.failure_count, job.last_error) == (
        JobStatus.PENDING,
        0,
        0,
        None,
    )
    assert job.run_at == T0 + timedelta(seconds=90)
    assert kinds(store, job_id) == [EventKind.SNOOZED]
    # Every process sees the pause, with the handler's reason.
    state = others.get(KEY)
    assert (state.paused_until, state.pause_reason) == (
        T0 + timedelta(seconds=90),
        "429 from the provider",
    )
    # A second job on the key waits for the pause's end too: its acquire raises at once.
    second = queue.enqueue_job(job_type, {}).job_id
    drain(worker, clock=clock)
    assert store.get_job(second).run_at == T0 + timedelta(seconds=90)
    assert store.get_job(second).attempts == 0
    store.request_cancel(job_id, clock())  # it would only be rate limited again
    clock.advance(90)
    drain(worker, clock=clock)
    assert store.get_job(second).status is JobStatus.COMPLETED
    assert store.list_dead_letters() == []


def test_a_shorter_rate_limited_snoozes_until_the_pause_already_there(
    store: SqlJobStore, limiters: Limiters, clock: FakeClock
) -> None:
    calls: list[str] = []
    registry = limited_registry(calls)
    limiters.pause(KEY, 600, "provider down")
    job_id = (
        JobQueue(store, registry, clock=clock).enqueue_job("test.fetch", {"retry_after": 5}).job_id
    )
    worker = Worker(store, registry, WorkerConfig(concurrency=1), clock=clock, limiters=limiters)
    drain(worker, clock=clock)
    assert store.get_job(job_id).run_at == T0 + timedelta(seconds=600)
    assert limiters.get(KEY).pause_reason == "provider down"


def test_a_job_waiting_for_a_paused_key_is_cancelled(
    store: SqlJobStore, limiters: Limiters
) -> None:
    """The wait is abortable: a cancel reaches the handler's acquire through its abort signal."""
    started = threading.Event()

    def wait_forever(_payload: Fetch, context: JobContext) -> str:
        started.set()
        context.limiter(KEY).acquire()
        return "granted"

    registry = HandlerRegistry()
    registry.register("test.wait", wait_forever, Fetch, max_attempts=1)
    limiters.pause(KEY, 3600, "down")
    job_id = JobQueue(store, registry).enqueue_job("test.wait", {}).job_id
    worker = Worker(
        store,
        registry,
        WorkerConfig(concurrency=1, cancel_check_interval_seconds=0.01),
        limiters=limiters,
    )
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        assert started.wait(60)
        store.request_cancel(job_id, utc_now())
        for _ in range(600):
            if store.get_job(job_id).status is JobStatus.CANCELLED:
                break
            threading.Event().wait(0.1)
    finally:
        worker.request_shutdown()
        thread.join(60)
    assert store.get_job(job_id).status is JobStatus.CANCELLED
