"""Store contract: a window's activity per job type (the History page, ADR 0054 and 0060), on
both databases, from the hourly history the counters' statements write: completions fall in
the hour they were recorded in, with their run time; failed and reclaimed attempts and dead
letters in theirs; the history adds up to the counters exactly; pruning the finished jobs
leaves it as it was, and PRUNE deletes only its hours older than HISTORY_KEPT."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, Select, func, select

from dominus.jobs import JobStore
from dominus.jobs.activity import Window
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
from dominus.schema.tables import job_metrics, job_queue
from tests.support.clock import T0
from tests.support.jobs import fail

pytestmark = pytest.mark.backends("sqlite", "postgresql")
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


def new(job_type: str, max_attempts: int = 3) -> NewJob:
    return NewJob(job_type=job_type, payload={}, priority=0, max_attempts=max_attempts, run_at=T0)


def run(store: JobStore, job_type: str, started: timedelta, seconds: float) -> None:
    """One job of `job_type` claimed at T0 + `started`, completed `seconds` later."""
    store.enqueue([new(job_type)], T0)
    [claimed] = store.claim("w1", [job_type], 1, T0 + started)
    finished = T0 + started + timedelta(seconds=seconds)
    outcome = Completed(claimed.claim, job_type=job_type, duration_seconds=seconds)
    store.settle([outcome], finished)


def failed_attempt(store: JobStore, job_type: str, at: timedelta, max_attempts: int = 3) -> None:
    store.enqueue([new(job_type, max_attempts)], T0)
    [claimed] = store.claim("w1", [job_type], 1, T0 + at)
    store.settle([fail(claimed.claim, retry_in=10**6)], T0 + at)


def test_activity_counts_each_hour_of_the_window(store: JobStore) -> None:
    run(store, "a", timedelta(minutes=10), 5)
    run(store, "a", timedelta(minutes=20), 15)
    run(store, "a", 2 * HOUR + timedelta(minutes=1), 1)
    run(store, "b", 23 * HOUR + timedelta(minutes=59), 30)  # recorded in the 24th hour still
    run(store, "b", 25 * HOUR, 1)  # after the window
    failed_attempt(store, "a", timedelta(minutes=30))
    failed_attempt(store, "c", 3 * HOUR, max_attempts=1)  # its last: dead-lettered too
    found = store.activity(Window(T0, HOUR, 24))
    assert set(found) == {"a", "b", "c"}
    a = found["a"]
    assert a.completed[:4] == [2, 0, 1, 0] and a.completed_total == 3
    assert a.failed[0] == 1 and a.failed_total == 1 and a.dead_lettered == 0
    assert a.run_seconds_total == pytest.approx(21)
    assert a.mean_run_seconds == pytest.approx(7)
    assert a.failure_rate == 0.25
    b = found["b"]
    assert b.completed[23] == 1 and b.completed_total == 1  # the one after it is left out
    c = found["c"]
    assert c.completed_total == 0 and c.failed[3] == 1 and c.dead_lettered == 1
    days = store.activity(Window(T0 - 6 * DAY, DAY, 7))
    assert days["b"].completed[6] == 1 and days["b"].completed_total == 1
    assert days["a"].completed == [0, 0, 0, 0, 0, 0, 3]
    assert store.activity(Window(T0 - 24 * HOUR, HOUR, 24)) == {}


def test_the_history_adds_up_to_the_counters(store: JobStore) -> None:
    """Written in the counters' own statements: a completion whose claim was lost (its job
    was reclaimed and ran again) is in neither, a reclaim is a failed attempt in both."""
    store.enqueue([new("a", max_attempts=2) for _ in range(4)], T0)
    first, second, third, fourth = store.claim("w1", ["a"], 4, T0)
    store.settle([Completed(first.claim, job_type="a", duration_seconds=2.0)], T0)
    store.settle([fail(second.claim)], T0 + HOUR)
    reclaimed = store.reclaim_stale(T0 + 2 * HOUR, 60, lambda _t, _a: 0)
    assert len(reclaimed) == 2  # third and fourth: a new round, their claims lost
    lost = Completed(third.claim, job_type="a", duration_seconds=50.0)
    assert store.settle([lost, fail(fourth.claim)], T0 + 2 * HOUR)[0] == [False, False]
    again = store.claim("w2", ["a"], 3, T0 + 3 * HOUR)
    assert len(again) == 3
    store.settle([Completed(again[0].claim, job_type="a", duration_seconds=4.0)], T0 + 3 * HOUR)
    store.settle([fail(job.claim) for job in again[1:]], T0 + 3 * HOUR)  # the last attempts
    [a] = store.activity(Window(T0, HOUR, 24)).values()
    totals = store.metric_totals()
    assert a.completed[:4] == [1, 0, 0, 1] and a.completed_total == totals.counter(COMPLETED, "a")
    failed = totals.counter(FAILED, "a") + totals.counter(RECLAIMED, "a")
    assert a.failed[:4] == [0, 1, 2, 2] and a.failed_total == failed
    assert a.dead_lettered == totals.counter(DEAD_LETTERED, "a") == 2
    assert a.run_seconds_total == pytest.approx(totals.durations["a"][0]) == 6.0


def test_pruning_the_finished_jobs_leaves_the_history(store: JobStore, engine: Engine) -> None:
    run(store, "a", timedelta(minutes=5), 3)
    run(store, "a", 2 * HOUR, 5)
    failed_attempt(store, "a", 3 * HOUR, max_attempts=1)
    window = Window(T0, HOUR, 24)
    before = store.activity(window)
    a_day_later = T0 + DAY + 4 * HOUR
    report = prune(engine, Retention(1, 1, 1), a_day_later, batch_size=100)
    assert report.counts["job_queue"] == 3 and report.counts["job_metrics"] == 0
    assert rows(engine, select(func.count()).select_from(job_queue)) == 0
    assert store.activity(window) == before
    assert before["a"].completed_total == 2 and before["a"].failed_total == 1


def test_prune_deletes_the_hours_older_than_it_keeps(store: JobStore, engine: Engine) -> None:
    run(store, "a", timedelta(minutes=5), 3)  # hour T0
    run(store, "a", 5 * HOUR, 2)  # hour T0 + 5 h
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
    [a] = store.activity(Window(T0, HOUR, 24)).values()
    assert a.completed[:6] == [0, 0, 0, 0, 0, 1]


def rows(engine: Engine, query: Select[Any]) -> int:
    with engine.connect() as connection:
        return int(connection.execute(query).scalar_one())
