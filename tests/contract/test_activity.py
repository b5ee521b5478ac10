"""Store contract: a window's activity per job type (the History page, ADR 0054 and 0060), on
both databases, from the hourly history folded from the counters: what a counter gained since
the last fold goes to the fold's hour; a reading adds what is not folded yet to the hour under
way, so it always agrees with the counters; the first fold (and a reading before it) takes the
kept job rows' history; pruning the finished jobs leaves the history as it was, and PRUNE
deletes only its hours older than HISTORY_KEPT."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, Select, delete, func, select

from dominus.jobs import JobStore
from dominus.jobs.activity import TypeActivity, Window
from dominus.jobs.metrics_model import (
    COMPLETED,
    DEAD_LETTERED,
    FAILED,
    HISTORY_KEPT,
    HISTORY_NAMES,
    RECLAIMED,
)
from dominus.jobs.model import Completed, NewJob
from dominus.maintenance.prune import prune
from dominus.maintenance.prune_rules import Retention
from dominus.schema.tables import job_events, job_metrics, job_queue
from tests.support.clock import T0
from tests.support.jobs import fail

pytestmark = pytest.mark.backends("sqlite", "postgresql")
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
WINDOW = Window(T0, HOUR, 24)


def new(job_type: str, max_attempts: int = 3) -> NewJob:
    return NewJob(job_type=job_type, payload={}, priority=0, max_attempts=max_attempts, run_at=T0)


def run(store: JobStore, job_type: str, started: timedelta, seconds: float) -> datetime:
    """One job of `job_type` claimed at T0 + `started`, completed `seconds` later; when."""
    store.enqueue([new(job_type)], T0)
    [claimed] = store.claim("w1", [job_type], 1, T0 + started)
    finished = T0 + started + timedelta(seconds=seconds)
    outcome = Completed(claimed.claim, job_type=job_type, duration_seconds=seconds)
    store.settle([outcome], finished)
    return finished


def failed_attempt(
    store: JobStore, job_type: str, at: timedelta, max_attempts: int = 3
) -> datetime:
    store.enqueue([new(job_type, max_attempts)], T0)
    [claimed] = store.claim("w1", [job_type], 1, T0 + at)
    store.settle([fail(claimed.claim, retry_in=10**6)], T0 + at)
    return T0 + at


def the_day(store: JobStore, fold: bool) -> None:
    """Three types' completions and failures over a day and a bit; with `fold`, the history
    folded after each (at its time, as a worker's maintenance would, to the minute)."""
    steps: list[Callable[[], datetime]] = [
        lambda: run(store, "a", timedelta(minutes=10), 5),
        lambda: run(store, "a", timedelta(minutes=20), 15),
        lambda: failed_attempt(store, "a", timedelta(minutes=30)),
        lambda: run(store, "a", 2 * HOUR + timedelta(minutes=1), 1),
        lambda: failed_attempt(store, "c", 3 * HOUR, max_attempts=1),  # dead-lettered too
        lambda: run(store, "b", 23 * HOUR + timedelta(minutes=58), 30),
        lambda: run(store, "b", 25 * HOUR, 1),  # after the 24 hours
    ]
    for step in steps:
        moment = step()
        if fold:
            store.fold_history(moment)


@pytest.mark.parametrize("fold", [True, False], ids=["folded", "from the rows"])
def test_activity_counts_each_hour_of_the_window(store: JobStore, fold: bool) -> None:
    the_day(store, fold)
    now = T0 + 26 * HOUR
    found = store.activity(WINDOW, now)
    assert set(found) == {"a", "b", "c"}
    a = found["a"]
    assert a.completed[:4] == [2, 0, 1, 0] and a.completed_total == 3
    assert a.failed[0] == 1 and a.failed_total == 1 and a.dead_lettered == 0
    assert a.run_seconds_total == pytest.approx(21, abs=0.01)
    assert a.mean_run_seconds == pytest.approx(7, abs=0.01)
    assert a.failure_rate == 0.25
    b = found["b"]
    assert b.completed[23] == 1 and b.completed_total == 1  # the one after it is left out
    c = found["c"]
    assert c.completed_total == 0 and c.failed[3] == 1 and c.dead_lettered == 1
    days = store.activity(Window(T0 - 6 * DAY, DAY, 7), now)
    assert days["b"].completed[6] == 1 and days["b"].completed_total == 1
    assert days["a"].completed == [0, 0, 0, 0, 0, 0, 3]
    assert store.activity(Window(T0 - 24 * HOUR, HOUR, 24), now) == {}


def test_what_is_not_folded_yet_counts_in_the_hour_under_way(store: JobStore) -> None:
    run(store, "a", timedelta(minutes=5), 2)
    assert store.fold_history(T0 + HOUR) == 2  # the first: the rows' history, marks set
    assert store.fold_history(T0 + HOUR) == 0  # nothing new: nothing written
    run(store, "a", timedelta(minutes=10), 3)  # recorded at 12:10, not folded
    run(store, "a", timedelta(minutes=20), 4)
    [a] = store.activity(WINDOW, T0 + 5 * HOUR).values()
    assert a.completed[:6] == [1, 0, 0, 0, 0, 2] and a.run_seconds_total == pytest.approx(
        9, abs=0.01
    )
    store.fold_history(T0 + 3 * HOUR)  # a fold dates them to its own hour
    [a] = store.activity(WINDOW, T0 + 5 * HOUR).values()
    assert a.completed[:6] == [1, 0, 0, 2, 0, 0]


def test_the_history_adds_up_to_the_counters(store: JobStore) -> None:
    """A completion whose claim was lost (its job was reclaimed and ran again) is in neither,
    a reclaim is a failed attempt in both, folded or not."""
    store.enqueue([new("a", max_attempts=2) for _ in range(4)], T0)
    first, second, third, fourth = store.claim("w1", ["a"], 4, T0)
    done = T0 + timedelta(seconds=2)
    store.settle([Completed(first.claim, job_type="a", duration_seconds=2.0)], done)
    store.fold_history(done)  # the first: from the rows
    store.settle([fail(second.claim)], T0 + HOUR)
    store.fold_history(T0 + HOUR)
    reclaimed = store.reclaim_stale(T0 + 2 * HOUR, 60, lambda _t, _a: 0)
    assert len(reclaimed) == 2  # third and fourth: a new round, their claims lost
    lost = Completed(third.claim, job_type="a", duration_seconds=50.0)
    assert store.settle([lost, fail(fourth.claim)], T0 + 2 * HOUR)[0] == [False, False]
    store.fold_history(T0 + 2 * HOUR)
    again = store.claim("w2", ["a"], 3, T0 + 3 * HOUR)
    assert len(again) == 3
    store.settle([Completed(again[0].claim, job_type="a", duration_seconds=4.0)], T0 + 3 * HOUR)
    store.settle([fail(job.claim) for job in again[1:]], T0 + 3 * HOUR)  # the last attempts
    for fold in (False, True):
        if fold:
            store.fold_history(T0 + 3 * HOUR)
        [a] = store.activity(WINDOW, T0 + 3 * HOUR).values()
        agrees_with_the_counters(store, a)
        assert a.completed[:4] == [1, 0, 0, 1]
        assert a.failed[:4] == [0, 1, 2, 2] and a.dead_lettered == 2
        assert a.run_seconds_total == pytest.approx(6.0, abs=0.01)


def agrees_with_the_counters(store: JobStore, a: TypeActivity) -> None:
    totals = store.metric_totals()
    assert a.completed_total == totals.counter(COMPLETED, "a")
    assert a.failed_total == totals.counter(FAILED, "a") + totals.counter(RECLAIMED, "a")
    assert a.dead_lettered == totals.counter(DEAD_LETTERED, "a")
    assert a.run_seconds_total == pytest.approx(totals.durations["a"][0], abs=0.01)


def test_the_history_begins_where_the_rows_end(store: JobStore, engine: Engine) -> None:
    """A database from before the history whose finished jobs an older PRUNE deleted: its
    first fold cannot date those completions, so it leaves them out, and counts from there on.
    (This PRUNE makes the first fold before it deletes.)"""
    run(store, "a", timedelta(minutes=5), 2)
    with engine.begin() as connection:
        connection.execute(delete(job_events))
        connection.execute(delete(job_queue))
    assert store.metric_totals().counter(COMPLETED, "a") == 1
    store.fold_history(T0 + DAY + HOUR)
    assert store.activity(Window(T0, HOUR, 48), T0 + DAY + HOUR) == {}
    run(store, "a", DAY + 2 * HOUR, 2)
    now = T0 + DAY + 2 * HOUR + timedelta(minutes=1)
    [a] = store.activity(Window(T0, HOUR, 48), now).values()
    assert a.completed_total == 1 and a.completed[26] == 1


def test_pruning_the_finished_jobs_leaves_the_history(store: JobStore, engine: Engine) -> None:
    store.fold_history(T0)  # a worker's maintenance folds at its start
    run(store, "a", timedelta(minutes=5), 3)
    store.fold_history(T0 + timedelta(minutes=6))
    run(store, "a", 2 * HOUR, 5)
    failed_attempt(store, "a", 3 * HOUR, max_attempts=1)
    store.fold_history(T0 + 3 * HOUR)
    before = store.activity(WINDOW, T0 + 4 * HOUR)
    assert before["a"].completed[:4] == [1, 0, 0, 1] and before["a"].failed[3] == 1
    a_day_later = T0 + DAY + 4 * HOUR
    report = prune(engine, Retention(1, 1, 1), a_day_later, batch_size=100)
    assert report.counts["job_queue"] == 3 and report.counts["job_metrics"] == 0
    assert rows(engine, select(func.count()).select_from(job_queue)) == 0
    assert store.activity(WINDOW, a_day_later) == before


def test_prune_deletes_the_hours_older_than_it_keeps(store: JobStore, engine: Engine) -> None:
    store.fold_history(T0)
    run(store, "a", timedelta(minutes=5), 3)
    store.fold_history(T0 + timedelta(minutes=6))  # hour T0
    run(store, "a", 5 * HOUR, 2)
    store.fold_history(T0 + 5 * HOUR)  # hour T0 + 5 h
    totals = store.metric_totals()
    history = select(func.count()).select_from(job_metrics)
    history = history.where(job_metrics.c.name.in_(HISTORY_NAMES))
    assert rows(engine, history) == 4  # completed and run seconds, two hours
    now = T0 + HISTORY_KEPT + 2 * HOUR  # the first hour is older than that, the second not
    keep_jobs = Retention(0, 0, 0)
    assert prune(engine, keep_jobs, now, batch_size=1, dry_run=True).counts["job_metrics"] == 2
    report = prune(engine, keep_jobs, now, batch_size=1)
    assert report.counts["job_metrics"] == 2 and report.steps == 2
    assert rows(engine, history) == 2
    assert store.metric_totals().counters == totals.counters  # the totals leave those rows out
    assert store.metric_totals().durations == totals.durations
    [a] = store.activity(WINDOW, now).values()
    assert a.completed[:6] == [0, 0, 0, 0, 0, 1]


def rows(engine: Engine, query: Select[Any]) -> int:
    with engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def test_prune_folds_first_if_no_worker_did(store: JobStore, engine: Engine) -> None:
    run(store, "a", timedelta(minutes=5), 3)
    failed_attempt(store, "a", HOUR + timedelta(minutes=1), max_attempts=1)
    before = store.activity(WINDOW, T0 + 2 * HOUR)  # from the rows: nothing folded yet
    prune(engine, Retention(1, 1, 1), T0 + DAY + 2 * HOUR, batch_size=1)
    assert rows(engine, select(func.count()).select_from(job_queue)) == 0
    assert store.activity(WINDOW, T0 + DAY + 2 * HOUR) == before
    assert before["a"].completed[0] == 1 and before["a"].failed[1] == 1


def test_an_idle_database_gets_no_history_rows(store: JobStore, engine: Engine) -> None:
    """Nothing has happened, so nothing is written (an empty database keeps no rows, which
    `dominus db copy` tells an empty target by), however often a worker folds."""
    store.enqueue([new("a")], T0)
    assert store.fold_history(T0) == store.fold_history(T0 + HOUR) == 0
    everything = select(func.count()).select_from(job_metrics)
    enqueue_rows = rows(engine, everything)  # PostgreSQL counts the enqueue in its statement
    assert enqueue_rows == (1 if engine.dialect.name == "postgresql" else 0)


def test_maintenance_folds_once_a_minute(store: JobStore) -> None:
    run(store, "a", timedelta(minutes=5), 2)
    store.maintain()  # a worker's first round folds
    assert store.fold_history(T0 + HOUR) == 0  # nothing moved since
    run(store, "a", timedelta(minutes=6), 2)
    store.maintain()  # within the minute: left to a later round
    assert store.fold_history(T0 + HOUR) == 2  # completed and duration_sum had moved
