"""The schedule store on both backends: rows synced from the configuration, each fire enqueued
once however many schedulers race on it (threads on separate connections), and still once after
its job has finished; the enabled flag, runs by hand, liveness and pruning."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Connection, Engine, func, select, update

from dominus.jobs import JobQueue, JobStatus, SqlJobStore, Worker, WorkerConfig
from dominus.jobs.model import EnqueueResult
from dominus.jobs.scheduling.model import Schedule, SchedulerInfo
from dominus.jobs.scheduling.planning import FirePlan, plan_fires
from dominus.jobs.scheduling.store import ScheduleStore
from dominus.schema.tables import job_queue, schedules
from tests.support.clock import T0, FakeClock
from tests.support.draining import drain

pytestmark = pytest.mark.backends("sqlite", "postgresql")


HOURLY = Schedule("hourly", "diag.noop", "0 * * * *")
RACERS = 6


@pytest.fixture
def schedule_store(engine: Engine) -> ScheduleStore:
    return ScheduleStore(engine)


def enqueue_with(queue: JobQueue, job_type: str = "diag.noop") -> Callable[..., EnqueueResult]:
    def enqueue(connection: Connection, dedupe_key: str) -> EnqueueResult:
        return queue.enqueue_job(job_type, {}, dedupe_key=dedupe_key, connection=connection)

    return enqueue


def plan_at(schedule_store: ScheduleStore, now: datetime, schedule: Schedule = HOURLY) -> FirePlan:
    row = schedule_store.rows([schedule.name])[schedule.name]
    assert row.next_fire_at is not None and schedule.timetable is not None
    plan = plan_fires(
        schedule.timetable,
        row.next_fire_at,
        now,
        catch_up_window=timedelta(hours=1),
        on_time=timedelta(seconds=5),
    )
    assert plan is not None, f"nothing due at {now}"
    return plan


def finish_jobs(store: SqlJobStore, queue: JobQueue, clock: FakeClock) -> None:
    drain(Worker(store, queue.registry, WorkerConfig(concurrency=2), clock=clock), clock=clock)


def job_count(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(job_queue)).scalar_one())


def test_sync_creates_enabled_rows_with_the_next_fire(schedule_store: ScheduleStore) -> None:
    off = Schedule("off", "diag.noop", None)
    assert schedule_store.sync([HOURLY, off], T0) == {"hourly": "created"}
    rows = schedule_store.rows()
    assert set(rows) == {"hourly"}  # a schedule that is off gets no row
    row = rows["hourly"]
    assert (row.cron, row.timezone, row.job_type, row.payload) == (
        "0 * * * *",
        "UTC",
        "diag.noop",
        {},
    )
    assert row.enabled
    assert row.next_fire_at == T0 + timedelta(hours=1)
    assert (row.last_fire_at, row.last_job_id, row.last_job_status) == (None, None, None)
    assert row.skipped_count == 0
    assert schedule_store.sync([HOURLY], T0 + timedelta(minutes=5)) == {}


def test_a_changed_expression_restarts_the_cursor_but_keeps_the_flag(
    schedule_store: ScheduleStore,
) -> None:
    schedule_store.sync([HOURLY], T0)
    schedule_store.set_enabled(HOURLY, False, T0)
    later = Schedule("hourly", "diag.noop", "30 * * * *", "Europe/Berlin")
    report = schedule_store.sync([later], T0 + timedelta(minutes=1))
    assert "cron changed" in report["hourly"]
    row = schedule_store.rows()["hourly"]
    assert (row.cron, row.timezone, row.enabled, row.next_fire_at) == (
        "30 * * * *",
        "Europe/Berlin",
        False,
        None,
    )
    schedule_store.set_enabled(later, True, T0 + timedelta(minutes=2))
    schedule_store.sync([HOURLY], T0 + timedelta(minutes=3))
    row = schedule_store.rows()["hourly"]
    assert row.enabled and row.next_fire_at == T0 + timedelta(hours=1)


def test_a_fire_enqueues_one_job_and_moves_the_cursor(
    schedule_store: ScheduleStore, queue: JobQueue, store: SqlJobStore, clock: FakeClock
) -> None:
    schedule_store.sync([HOURLY], T0)
    fire = T0 + timedelta(hours=1)
    now = clock.advance(3600.5)
    applied = schedule_store.apply(
        "hourly", plan_at(schedule_store, now), enqueue_with(queue), "s1", now
    )
    assert applied.applied and applied.job is not None and applied.job.created
    job = store.get_job(applied.job.job_id)
    assert job.dedupe_key == f"schedule:hourly:{fire.isoformat()}"
    assert job.dedupe_key.endswith("T13:00:00+00:00")
    row = schedule_store.rows()["hourly"]
    assert (row.last_fire_at, row.last_job_id, row.last_job_status) == (fire, job.id, "pending")
    assert row.next_fire_at == fire + timedelta(hours=1)
    [record] = schedule_store.fires("hourly")
    assert (record.fire_at, record.job_id, record.catch_up, record.scheduler_id) == (
        fire,
        job.id,
        False,
        "s1",
    )


def test_schedulers_racing_on_one_fire_enqueue_one_job(
    schedule_store: ScheduleStore, queue: JobQueue, engine: Engine, clock: FakeClock
) -> None:
    schedule_store.sync([HOURLY], T0)
    now = clock.advance(3600.2)
    plan = plan_at(schedule_store, now)
    barrier = threading.Barrier(RACERS)
    results: list[object] = []
    lock = threading.Lock()

    def race(index: int) -> None:
        # Each thread takes its own connection from the pool, as a scheduler process would.
        barrier.wait()
        try:
            result: object = schedule_store.apply(
                "hourly", plan, enqueue_with(queue), f"s{index}", now
            )
        except Exception as error:
            result = error
        with lock:
            results.append(result)

    threads = [threading.Thread(target=race, args=(index,)) for index in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    errors = [result for result in results if isinstance(result, Exception)]
    assert errors == []
    winners = [result for result in results if getattr(result, "job", None) is not None]
    assert len(winners) == 1
    assert sum(1 for result in results if getattr(result, "applied", False)) == 1
    assert job_count(engine) == 1
    assert len(schedule_store.fires("hourly")) == 1


def test_a_fire_stays_enqueued_once_after_its_job_finished(
    schedule_store: ScheduleStore,
    queue: JobQueue,
    store: SqlJobStore,
    engine: Engine,
    clock: FakeClock,
) -> None:
    schedule_store.sync([HOURLY], T0)
    now = clock.advance(3600.2)
    plan = plan_at(schedule_store, now)
    first = schedule_store.apply("hourly", plan, enqueue_with(queue), "s1", now)
    assert first.job is not None
    finish_jobs(store, queue, clock)
    assert store.get_job(first.job.job_id).status is JobStatus.COMPLETED
    # The job_queue dedupe index no longer covers the finished job; the fire's row does. Put
    # the cursor back, as a scheduler with a stale view would find it.
    with engine.begin() as connection:
        connection.execute(
            update(schedules).where(schedules.c.name == "hourly").values(next_fire_at=plan.cursor)
        )
    again = schedule_store.apply("hourly", plan, enqueue_with(queue), "s2", now)
    assert again.applied and again.job is None
    assert job_count(engine) == 1
    assert schedule_store.rows()["hourly"].last_job_status == "completed"


def test_a_lost_compare_and_set_does_nothing(
    schedule_store: ScheduleStore, queue: JobQueue, engine: Engine, clock: FakeClock
) -> None:
    schedule_store.sync([HOURLY], T0)
    now = clock.advance(3600.2)
    plan = plan_at(schedule_store, now)
    assert schedule_store.apply("hourly", plan, enqueue_with(queue), "s1", now).job is not None
    stale = schedule_store.apply("hourly", plan, enqueue_with(queue), "s2", now)
    assert not stale.applied
    assert job_count(engine) == 1


def test_skipped_fires_are_counted(
    schedule_store: ScheduleStore, queue: JobQueue, engine: Engine, clock: FakeClock
) -> None:
    schedule_store.sync([HOURLY], T0)
    now = clock.advance(5 * 3600 + 1800)  # 13:00 to 17:00 missed; 17:00 is 30 minutes old
    plan = plan_at(schedule_store, now)
    assert (plan.fire_at, plan.skipped) == (T0 + timedelta(hours=5), 4)
    applied = schedule_store.apply("hourly", plan, enqueue_with(queue), "s1", now)
    assert applied.job is not None
    row = schedule_store.rows()["hourly"]
    assert (row.skipped_count, row.last_skipped_at) == (4, T0 + timedelta(hours=4))
    assert schedule_store.fires("hourly")[0].catch_up


def test_a_failed_enqueue_leaves_the_fire_due(
    schedule_store: ScheduleStore, queue: JobQueue, engine: Engine, clock: FakeClock
) -> None:
    schedule_store.sync([HOURLY], T0)
    now = clock.advance(3600.2)
    plan = plan_at(schedule_store, now)
    with pytest.raises(RuntimeError):
        schedule_store.apply("hourly", plan, failing_enqueue, "s1", now)
    assert schedule_store.rows()["hourly"].next_fire_at == plan.cursor
    assert schedule_store.fires("hourly") == []
    assert schedule_store.apply("hourly", plan, enqueue_with(queue), "s1", now).job is not None


def failing_enqueue(_connection: Connection, _key: str) -> EnqueueResult:
    raise RuntimeError("no room")


def test_disabling_stops_fires_and_enabling_starts_from_the_next(
    schedule_store: ScheduleStore, queue: JobQueue, engine: Engine, clock: FakeClock
) -> None:
    schedule_store.sync([HOURLY], T0)
    plan = plan_at(schedule_store, clock.advance(3600.2))
    row = schedule_store.set_enabled(HOURLY, False, clock.now)
    assert (row.enabled, row.next_fire_at) == (False, None)
    assert not schedule_store.apply("hourly", plan, enqueue_with(queue), "s1", clock.now).applied
    assert job_count(engine) == 0
    # Fires pass while disabled; enabling starts at the next one, without catching up.
    row = schedule_store.set_enabled(HOURLY, True, clock.advance(7200))
    assert row.enabled and row.next_fire_at == T0 + timedelta(hours=4)
    # Enabling an enabled schedule keeps its cursor.
    assert schedule_store.set_enabled(HOURLY, True, clock.advance(60)).next_fire_at == (
        T0 + timedelta(hours=4)
    )


def test_enabling_or_disabling_creates_the_row(schedule_store: ScheduleStore) -> None:
    row = schedule_store.set_enabled(HOURLY, False, T0)
    assert (row.name, row.enabled, row.next_fire_at) == ("hourly", False, None)
    assert schedule_store.sync([HOURLY], T0) == {}
    assert not schedule_store.rows()["hourly"].enabled


def test_a_run_by_hand_is_deduplicated_against_the_schedules_active_jobs(
    schedule_store: ScheduleStore,
    queue: JobQueue,
    store: SqlJobStore,
    clock: FakeClock,
) -> None:
    first = schedule_store.run_now(HOURLY, enqueue_with(queue), clock.now)
    assert first.created
    assert store.get_job(first.job_id).dedupe_key == "schedule:hourly:manual"
    again = schedule_store.run_now(HOURLY, enqueue_with(queue), clock.now)
    assert (again.job_id, again.created) == (first.job_id, False)
    assert schedule_store.rows()["hourly"].last_job_id == first.job_id
    finish_jobs(store, queue, clock)
    second = schedule_store.run_now(HOURLY, enqueue_with(queue), clock.now)
    assert second.created and second.job_id != first.job_id
    finish_jobs(store, queue, clock)
    # A pending fire counts as well.
    now = clock.advance(3600.2)
    fired = schedule_store.apply(
        "hourly", plan_at(schedule_store, now), enqueue_with(queue), "s", now
    )
    assert fired.job is not None
    third = schedule_store.run_now(HOURLY, enqueue_with(queue), now)
    assert (third.job_id, third.created) == (fired.job.job_id, False)


def test_scheduler_liveness(schedule_store: ScheduleStore) -> None:
    assert schedule_store.liveness(T0).last_tick_at is None
    for name in ("a", "b"):
        schedule_store.register_scheduler(SchedulerInfo(name, "host", 1, T0, T0))
    schedule_store.record_tick("a", T0 + timedelta(seconds=30))
    schedule_store.mark_scheduler_stopped("b", T0 + timedelta(seconds=40))
    liveness = schedule_store.liveness(alive_since=T0 + timedelta(seconds=10))
    assert liveness.last_tick_at == T0 + timedelta(seconds=40)
    assert liveness.alive == 1  # b stopped
    assert schedule_store.liveness(alive_since=T0 + timedelta(minutes=5)).alive == 0
    assert {info.id for info in schedule_store.list_schedulers()} == {"a", "b"}


def test_pruning_old_fires_and_schedulers(
    schedule_store: ScheduleStore, queue: JobQueue, clock: FakeClock
) -> None:
    schedule_store.sync([HOURLY], T0)
    now = clock.advance(3600.2)
    schedule_store.apply("hourly", plan_at(schedule_store, now), enqueue_with(queue), "s", now)
    schedule_store.register_scheduler(SchedulerInfo("old", "host", 1, T0, T0))
    pruned = schedule_store.prune(
        fires_before=T0 + timedelta(hours=2), schedulers_before=T0 + timedelta(seconds=1)
    )
    assert pruned == 2
    assert schedule_store.fires("hourly") == []
    assert schedule_store.list_schedulers() == []
