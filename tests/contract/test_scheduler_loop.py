"""The scheduler loop on both backends, stepped with a fake clock: fires on time, one catch-up
after downtime within the window and none beyond it, several schedulers making one job per fire,
enable/disable seen at the next tick, database outages survived (the missed fire caught up),
inactive schedules, a full queue, the liveness row, and a scheduler with a fast clock that must not
silence the others."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import timedelta

import pytest
from sqlalchemy import Engine

from dominus.db.engine import create_database_engine
from dominus.errors import DatabaseError, InvalidPayloadError
from dominus.jobs import HandlerRegistry, JobQueue, JobStatus, SqlJobStore
from dominus.jobs.diagnostic import register_diagnostic_jobs
from dominus.jobs.scheduling.model import Schedule, ScheduleRow
from dominus.jobs.scheduling.scheduler import Scheduler, SchedulerConfig
from dominus.jobs.scheduling.store import ScheduleStore
from tests.support.clock import T0, FakeClock
from tests.support.polling import wait_until

pytestmark = pytest.mark.backends("sqlite", "postgresql")


HOURLY = Schedule("hourly", "diag.noop", "0 * * * *")  # T0 is 12:00; fires 13:00, 14:00...
DAILY = Schedule("daily", "diag.noop", "0 13 * * *")
CONFIG = SchedulerConfig(heartbeat_interval_seconds=30, on_time_seconds=5)


def make_scheduler(
    engine: Engine,
    queue: JobQueue,
    clock: FakeClock,
    schedules: list[Schedule] | None = None,
    config: SchedulerConfig = CONFIG,
    name: str = "s1",
) -> Scheduler:
    return Scheduler(
        ScheduleStore(engine),
        queue,
        schedules or [HOURLY],
        config,
        clock=clock,
        scheduler_id=name,
    )


def jobs_of(store: SqlJobStore) -> list[str | None]:
    """The dedupe keys of every job, oldest first."""
    return [job.dedupe_key for job in reversed(store.list_jobs(limit=1000))]


def key(name: str, hours_after_t0: float) -> str:
    return f"schedule:{name}:{(T0 + timedelta(hours=hours_after_t0)).isoformat()}"


def test_fires_on_time_once(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    scheduler = make_scheduler(engine, queue, clock)
    assert scheduler.run_once(clock.now).fired == 0
    assert scheduler.run_once(clock.advance(3599)).fired == 0
    assert scheduler.run_once(clock.advance(1.2)).fired == 1
    assert scheduler.run_once(clock.advance(1)).fired == 0
    assert scheduler.run_once(clock.advance(3600)).fired == 1
    assert jobs_of(store) == [key("hourly", 1), key("hourly", 2)]


def test_several_schedulers_stepping_together_make_one_job_per_fire(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock, database_url: str
) -> None:
    engines = [create_database_engine(database_url) for _ in range(3)]
    try:
        schedulers = [
            make_scheduler(other, queue, clock, name=f"s{index}")
            for index, other in enumerate(engines)
        ]
        for hour in range(3):
            clock.now = T0 + timedelta(hours=hour, seconds=0.5)
            fired = sum(scheduler.run_once(clock.now).fired for scheduler in schedulers)
            assert fired == (1 if hour else 0)
    finally:
        for other in engines:
            other.dispose()
    assert jobs_of(store) == [key("hourly", 1), key("hourly", 2)]


def test_catch_up_after_downtime_within_the_window_makes_one_job(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    make_scheduler(engine, queue, clock).run_once(clock.now)  # then it goes down
    clock.advance(2.5 * 3600)  # 13:00 and 14:00 missed; 14:00 is 30 minutes old at 14:30
    restarted = make_scheduler(engine, queue, clock, name="s2")
    assert restarted.run_once(clock.now).fired == 1
    assert restarted.run_once(clock.advance(1)).fired == 0
    assert jobs_of(store) == [key("hourly", 2)]
    row = ScheduleStore(engine).rows()["hourly"]
    assert (row.skipped_count, row.last_skipped_at) == (1, T0 + timedelta(hours=1))
    assert row.next_fire_at == T0 + timedelta(hours=3)
    [fire] = ScheduleStore(engine).fires("hourly")
    assert fire.catch_up and fire.scheduler_id == "s2"


def test_no_job_for_a_miss_beyond_the_window(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    make_scheduler(engine, queue, clock, [DAILY]).run_once(clock.now)
    clock.advance(3 * 3600)  # 13:00 missed; two hours old at 15:00
    restarted = make_scheduler(engine, queue, clock, [DAILY], name="s2")
    assert restarted.run_once(clock.now).fired == 0
    assert jobs_of(store) == []
    row = ScheduleStore(engine).rows()["daily"]
    assert (row.skipped_count, row.last_skipped_at) == (1, T0 + timedelta(hours=1))
    assert row.next_fire_at == T0 + timedelta(days=1, hours=1)


def test_the_catch_up_window_is_a_setting(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    wide = SchedulerConfig(catch_up_window_seconds=3 * 3600)
    make_scheduler(engine, queue, clock, [DAILY], wide).run_once(clock.now)
    clock.advance(3 * 3600)
    assert make_scheduler(engine, queue, clock, [DAILY], wide, "s2").run_once(clock.now).fired == 1
    assert jobs_of(store) == [key("daily", 1)]


def test_enable_and_disable_reach_running_schedulers_at_their_next_tick(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    first = make_scheduler(engine, queue, clock, name="a")
    second = make_scheduler(engine, queue, clock, name="b")
    for scheduler in (first, second):
        scheduler.run_once(clock.now)
    ScheduleStore(engine).set_enabled(HOURLY, False, clock.advance(60))  # as the CLI does
    clock.advance(3600)  # 13:01: the 13:00 fire passed while disabled
    assert first.run_once(clock.now).fired + second.run_once(clock.now).fired == 0
    ScheduleStore(engine).set_enabled(HOURLY, True, clock.advance(60))
    clock.now = T0 + timedelta(hours=2, seconds=1)
    assert first.run_once(clock.now).fired + second.run_once(clock.now).fired == 1
    assert jobs_of(store) == [key("hourly", 2)]  # 13:00 was neither run nor caught up
    assert ScheduleStore(engine).rows()["hourly"].skipped_count == 0


class FlakyScheduleStore(ScheduleStore):
    """A store whose reads fail while `down` is set, as during a database outage."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self.down = False

    def rows(self, names: Iterable[str] | None = None) -> dict[str, ScheduleRow]:
        if self.down:
            raise DatabaseError("the database is unavailable", detail="connection refused")
        return super().rows(names)


def test_a_fire_missed_during_an_outage_is_caught_up(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    flaky = FlakyScheduleStore(engine)
    scheduler = Scheduler(flaky, queue, [HOURLY], CONFIG, clock=clock, scheduler_id="s1")
    scheduler.run_once(clock.now)
    flaky.down = True
    clock.now = T0 + timedelta(minutes=59)
    for _ in range(10):  # failing ticks, backing off, across 13:00
        scheduler.run_once(clock.advance(30))
    assert jobs_of(store) == []
    flaky.down = False
    clock.advance(60)  # past any backoff
    assert scheduler.run_once(clock.now).fired == 1
    assert jobs_of(store) == [key("hourly", 1)]
    assert ScheduleStore(engine).fires("hourly")[0].catch_up


def test_inactive_and_switched_off_schedules_fire_nothing(
    engine: Engine, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    unknown_type = Schedule("backup", "BACKUP", "0 * * * *")
    off = Schedule("prune", "diag.noop", None)
    scheduler = make_scheduler(engine, queue, clock, [unknown_type, off])
    assert scheduler.active == []
    scheduler.run_once(clock.now)
    assert scheduler.run_once(clock.advance(3601)).fired == 0
    assert jobs_of(store) == []
    assert set(ScheduleStore(engine).rows()) == {"backup"}  # listed, with its configuration


def test_a_payload_its_job_type_refuses_stops_the_start(
    engine: Engine, queue: JobQueue, clock: FakeClock
) -> None:
    bad = Schedule("sleepy", "diag.sleep", "0 * * * *", payload={"seconds": "long"})
    with pytest.raises(InvalidPayloadError, match="seconds"):
        make_scheduler(engine, queue, clock, [bad])


def test_a_full_queue_keeps_the_fire_due(
    engine: Engine, store: SqlJobStore, clock: FakeClock
) -> None:
    registry = register_diagnostic_jobs(HandlerRegistry())
    full = JobQueue(store, registry, max_depth=1, clock=clock)
    blocker = full.enqueue_job("diag.noop")
    scheduler = make_scheduler(engine, full, clock)
    scheduler.run_once(clock.now)
    assert scheduler.run_once(clock.advance(3601)).fired == 0
    assert scheduler.run_once(clock.advance(1)).fired == 0
    full.cancel(blocker.job_id)
    assert scheduler.run_once(clock.advance(1)).fired == 1
    assert jobs_of(store)[-1] == key("hourly", 1)


def test_the_liveness_row(engine: Engine, queue: JobQueue, clock: FakeClock) -> None:
    scheduler = make_scheduler(engine, queue, clock)
    schedule_store = ScheduleStore(engine)
    scheduler.run_once(clock.now)
    assert schedule_store.liveness(clock.now).last_tick_at == T0
    scheduler.run_once(clock.advance(10))  # before the heartbeat interval: not written
    assert schedule_store.liveness(clock.now).last_tick_at == T0
    scheduler.run_once(clock.advance(25))
    assert schedule_store.liveness(clock.now).last_tick_at == T0 + timedelta(seconds=35)


def test_run_fires_on_the_real_clock_and_stops_when_asked(
    engine: Engine, store: SqlJobStore
) -> None:
    registry = register_diagnostic_jobs(HandlerRegistry())
    queue = JobQueue(store, registry)
    every_second = Schedule("tick", "diag.noop", "* * * * * *")
    scheduler = Scheduler(ScheduleStore(engine), queue, [every_second])
    thread = threading.Thread(target=scheduler.run, daemon=True)
    thread.start()
    wait_until(lambda: len(store.list_jobs()) >= 2, 15, "two fires of an every-second schedule")
    scheduler.request_shutdown()
    thread.join(10)
    assert not thread.is_alive()
    [info] = ScheduleStore(engine).list_schedulers()
    assert info.id == scheduler.id and info.stopped_at is not None
    keys = [job.dedupe_key for job in store.list_jobs()]
    assert len(keys) == len(set(keys))
    assert all(job.status is JobStatus.PENDING for job in store.list_jobs())


def test_a_scheduler_with_a_fast_clock_does_not_silence_a_correct_one(
    engine: Engine,
    queue: JobQueue,
    store: SqlJobStore,
    clock: FakeClock,
    database_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    other_engine = create_database_engine(database_url)
    try:
        fast_clock = FakeClock(T0 + timedelta(hours=2))
        correct = make_scheduler(engine, queue, clock, name="correct")
        fast = make_scheduler(other_engine, queue, fast_clock, name="fast")
        correct.run_once(clock.now)  # the cursor at 13:00
        # Its clock says 14:00:00.5: it fires "14:00", skips "13:00" and moves the cursor to 15:00.
        fast.run_once(fast_clock.advance(0.5))
        with caplog.at_level("WARNING", logger="dominus.scheduler"):
            assert correct.run_once(clock.advance(30)).fired == 0  # 12:00:30: nothing due yet
        assert "ahead of this clock by more than one period" in caplog.text
        # Moved back (the compare-and-set takes a cursor backwards as well as forwards).
        assert ScheduleStore(engine).rows()["hourly"].next_fire_at == T0 + timedelta(hours=1)
        clock.now = T0 + timedelta(hours=1, seconds=0.5)
        assert correct.run_once(clock.now).fired == 1  # 13:00, skipped by the fast one
        # 14:00 has its job already, enqueued two hours early by the fast one: not a second.
        clock.now = T0 + timedelta(hours=2, seconds=0.5)
        assert correct.run_once(clock.now).fired == 0
    finally:
        other_engine.dispose()
    assert jobs_of(store) == [key("hourly", 2), key("hourly", 1)]
    fired_by = {(fire.fire_at, fire.scheduler_id) for fire in ScheduleStore(engine).fires("hourly")}
    assert fired_by == {(T0 + timedelta(hours=1), "correct"), (T0 + timedelta(hours=2), "fast")}
    assert ScheduleStore(engine).rows()["hourly"].next_fire_at == T0 + timedelta(hours=3)
