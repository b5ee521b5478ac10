"""Real `dominus scheduler` (and `dominus serve --with-scheduler`) processes sharing one database,
on SQLite and PostgreSQL: several schedulers make exactly one job per fire of an every-second
schedule, enable/disable from the CLI reaches a running scheduler, a SIGKILLed scheduler restarted
within the catch-up window fires the missed tick once, the embedded scheduler fires too, and a
scheduler whose clock runs two hours fast (libfaketime) does not silence a correctly clocked one."""

from __future__ import annotations

import re
import signal
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from dominus.jobs import SqlJobStore
from dominus.jobs.clock import utc_now
from dominus.jobs.scheduling import FireRecord, ScheduleStore
from dominus.jobs.scheduling.model import DEDUPE_PREFIX, fire_dedupe_key
from tests.support.polling import free_port
from tests.support.processes import DominusProcess, DominusProcesses, database_clock, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends("sqlite", "postgresql")]

EVERY_SECOND = {"SCHEDULER_DIAG_CRON": "* * * * * *"}
_STARTED = re.compile(r"scheduler (\S+) started")
# Debian's libfaketime (package faketime, installed by .ci/run): shifts a process's clock.
LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")


def fires(store: SqlJobStore) -> list[FireRecord]:
    """The diag schedule's enqueued fires, oldest first."""
    return list(reversed(ScheduleStore(store.engine).fires("diag", limit=10_000)))


def scheduler_id(process: DominusProcess) -> str:
    def logged() -> str | None:
        match = _STARTED.search(process.stderr())
        if match is None and not process.is_running():
            raise AssertionError(f"{process.name} exited early:\n{process.stderr()}")
        return match.group(1) if match else None

    return wait_until(logged, 20, message=f"{process.name} to start")


def assert_one_job_per_fire(store: SqlJobStore, records: list[FireRecord]) -> None:
    """Every fire row has its own job, carrying the fire's dedupe key, and no diag job exists
    without a fire row (the diag schedule is never run by hand in these tests). Jobs of the other
    schedules are left out: a scheduler whose clock crosses one of their fire times (the fast
    one, two hours ahead, crossing a six-hourly poll) enqueues them too."""
    jobs = [
        job
        for job in store.list_jobs(limit=10_000)
        if job.dedupe_key and job.dedupe_key.startswith(f"{DEDUPE_PREFIX}diag:")
    ]
    keys = [job.dedupe_key for job in jobs]
    assert len(keys) == len(set(keys)), "two jobs for one fire"
    by_id = {job.id: job for job in jobs}
    assert sorted(by_id) == sorted(record.job_id for record in records if record.job_id)
    for record in records:
        assert record.job_id is not None
        assert by_id[record.job_id].dedupe_key == fire_dedupe_key("diag", record.fire_at)


def test_three_schedulers_enqueue_each_fire_once(
    dominus_procs: DominusProcesses, store: SqlJobStore
) -> None:
    schedulers = [
        dominus_procs.start("scheduler", env=EVERY_SECOND, name=f"scheduler-{index}")
        for index in range(3)
    ]
    ids = {scheduler_id(process) for process in schedulers}
    assert len(ids) == 3
    wait_until(lambda: len(fires(store)) >= 6, 30, message=lambda: f"six fires: {fires(store)}")
    for process in schedulers:
        process.send(signal.SIGTERM)
    assert [process.wait_exit(20) for process in schedulers] == [0, 0, 0]

    records = fires(store)
    assert_one_job_per_fire(store, records)
    assert all(record.fire_at.microsecond == 0 for record in records)
    # No fire between the first and the last was lost: each one was enqueued or, if every
    # scheduler got to it late, counted as skipped (then the catch-up job stands for it).
    span = int((records[-1].fire_at - records[0].fire_at).total_seconds()) + 1
    skipped = ScheduleStore(store.engine).rows()["diag"].skipped_count
    assert len(records) + skipped >= span
    infos = ScheduleStore(store.engine).list_schedulers()
    assert {info.id for info in infos} == ids
    assert all(info.stopped_at is not None for info in infos)


def test_enable_and_disable_from_the_cli_reach_a_running_scheduler(
    dominus_procs: DominusProcesses, store: SqlJobStore
) -> None:
    process = dominus_procs.start("scheduler", env=EVERY_SECOND, name="scheduler")
    scheduler_id(process)
    wait_until(lambda: len(fires(store)) >= 2, 20, message="two fires")

    dominus_procs.cli("schedules", "disable", "diag", env=EVERY_SECOND)
    fired = len(fires(store))  # the flag is committed: no fire can be enqueued after this
    wait_until(lambda: "schedule diag is disabled" in process.stderr(), 10, message="the log")
    time.sleep(2.5)  # two and a half fire times of an every-second schedule
    assert len(fires(store)) == fired

    enabling_at = database_clock(store)()
    dominus_procs.cli("schedules", "enable", "diag", env=EVERY_SECOND)
    wait_until(lambda: "schedule diag is enabled again" in process.stderr(), 10, message="log")
    wait_until(lambda: len(fires(store)) >= fired + 2, 20, message="fires after enabling")
    records = fires(store)
    assert_one_job_per_fire(store, records)
    # Fires that passed while disabled were not caught up: the first one after is new.
    assert records[fired].fire_at > enabling_at
    assert process.stop(20) == 0


def test_a_sigkilled_scheduler_restarted_within_the_window_fires_the_missed_tick_once(
    dominus_procs: DominusProcesses, store: SqlJobStore
) -> None:
    clock = database_clock(store)
    # A schedule that fires once a minute, a few seconds from now (croniter: seconds last): late
    # enough for the first scheduler to start and set its cursor before then, which takes over
    # six seconds on a loaded machine (two cores, the suite's other processes).
    target = (clock() + timedelta(seconds=12)).replace(microsecond=0)
    env = {"SCHEDULER_DIAG_CRON": f"* * * * * {target.second}"}
    first = dominus_procs.start("scheduler", env=env, name="scheduler-first")
    scheduler_id(first)

    def cursor() -> datetime | None:
        row = ScheduleStore(store.engine).rows().get("diag")
        return None if row is None else row.next_fire_at

    wait_until(lambda: cursor() == target, 20, message=lambda: f"cursor at {target}: {cursor()}")
    assert clock() < target, "the scheduler started too slowly for this test"
    first.send(signal.SIGKILL)
    assert first.wait_exit(10) == -signal.SIGKILL
    assert fires(store) == []

    wait_until(lambda: clock() > target + timedelta(seconds=1), 20, message="the fire to pass")
    second = dominus_procs.start("scheduler", env=env, name="scheduler-second")
    second_id = scheduler_id(second)
    wait_until(lambda: fires(store), 20, message="the missed fire")
    assert second.stop(20) == 0

    [record] = fires(store)
    assert (record.fire_at, record.scheduler_id) == (target, second_id)
    assert_one_job_per_fire(store, [record])
    row = ScheduleStore(store.engine).rows()["diag"]
    assert row.skipped_count == 0
    assert row.next_fire_at == target + timedelta(minutes=1)


def test_serve_with_scheduler_fires_and_reports_its_tick(
    dominus_procs: DominusProcesses, store: SqlJobStore
) -> None:
    port = free_port()
    server = dominus_procs.start(
        "serve", "--port", str(port), "--with-scheduler", env=EVERY_SECOND, name="serve"
    )
    scheduler_id(server)
    wait_until(lambda: len(fires(store)) >= 2, 30, message="two fires from the server")
    assert "no scheduler has ticked" not in server.stderr()

    def health() -> dict[str, str | None] | None:
        try:
            body = httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=5).json()
        except httpx.TransportError:
            return None
        return body["scheduler"] if body["scheduler"]["status"] == "ok" else None

    tick = wait_until(health, 20, message="/health to report the scheduler's tick")
    assert tick["last_tick_at"] is not None
    assert server.stop(30) == 0
    assert_one_job_per_fire(store, fires(store))
    [info] = ScheduleStore(store.engine).list_schedulers()
    assert info.stopped_at is not None


@pytest.mark.backends("sqlite")
def test_serve_without_a_scheduler_says_so_once(
    dominus_procs: DominusProcesses, store: SqlJobStore
) -> None:
    server = dominus_procs.start("serve", "--port", str(free_port()), env=EVERY_SECOND)
    warning = "no scheduler has ticked within the last two minutes"
    wait_until(lambda: warning in server.stderr(), 20, message="the warning")
    assert server.stop(20) == 0
    assert server.stderr().count(warning) == 1
    assert fires(store) == []


@pytest.mark.backends("sqlite")  # PostgreSQL schedulers read the server's clock, not their own
def test_a_scheduler_with_a_fast_clock_does_not_silence_a_correctly_clocked_one(
    dominus_procs: DominusProcesses, store: SqlJobStore
) -> None:
    assert LIBFAKETIME.exists(), f"{LIBFAKETIME} is missing: apt-get install faketime"
    # Only the wall clock: waits measured on a shifted monotonic clock would last two hours.
    fast_clock = {"LD_PRELOAD": str(LIBFAKETIME), "FAKETIME": "+2h", "DONT_FAKE_MONOTONIC": "1"}
    two_hours_fast = EVERY_SECOND | fast_clock
    fast = dominus_procs.start("scheduler", env=two_hours_fast, name="scheduler-fast")
    fast_id = scheduler_id(fast)
    wait_until(
        lambda: any(record.fire_at > utc_now() + timedelta(hours=1) for record in fires(store)),
        30,
        message=lambda: f"a fire two hours ahead from the fast scheduler: {fires(store)[-3:]}",
    )
    correct = dominus_procs.start("scheduler", env=EVERY_SECOND, name="scheduler-correct")
    correct_id = scheduler_id(correct)

    def fired_by_correct() -> list[FireRecord]:
        return [record for record in fires(store) if record.scheduler_id == correct_id]

    def fires_by_scheduler() -> str:
        counts = Counter(record.scheduler_id for record in fires(store))
        return f"fires by scheduler: {dict(counts)} (correct: {correct_id}, fast: {fast_id})"

    # Each tick the fast one moves the cursor two hours ahead again and the correct one moves it
    # back: the correct one still enqueues fires, at the times its clock has reached.
    wait_until(
        lambda: len(fired_by_correct()) >= 5,
        60,
        message=lambda: f"five fires from the correctly clocked scheduler; {fires_by_scheduler()}",
    )
    assert correct.stop(20) == 0
    assert fast.stop(20) == 0
    stopped_at = utc_now()
    assert all(record.fire_at <= stopped_at for record in fired_by_correct())
    assert {record.scheduler_id for record in fires(store)} == {fast_id, correct_id}
    assert_one_job_per_fire(store, fires(store))
    assert "ahead of this clock by more than one period" in correct.stderr()
