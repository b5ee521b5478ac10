"""Store contract: a window's activity per job type (the History page, ADR 0054), on both
databases: completions fall in the interval their job finished in, with its run time; failed
attempts in the interval of their event; nothing outside the window counts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dominus.jobs import JobStore
from dominus.jobs.activity import Window
from dominus.jobs.model import Completed, NewJob
from tests.support.clock import T0
from tests.support.jobs import fail

pytestmark = pytest.mark.backends("sqlite", "postgresql")
HOUR = timedelta(hours=1)


def run(store: JobStore, job_type: str, started: timedelta, seconds: float) -> None:
    job = NewJob(job_type=job_type, payload={}, priority=0, max_attempts=3, run_at=T0)
    store.enqueue([job], T0)
    [claimed] = store.claim("w1", [job_type], 1, T0 + started)
    finished = T0 + started + timedelta(seconds=seconds)
    store.settle([Completed(claimed.claim, job_type=job_type)], finished)


def failed_attempt(store: JobStore, job_type: str, at: timedelta) -> None:
    job = NewJob(job_type=job_type, payload={}, priority=0, max_attempts=3, run_at=T0)
    store.enqueue([job], T0)
    [claimed] = store.claim("w1", [job_type], 1, T0 + at)
    store.settle([fail(claimed.claim, retry_in=10**6)], T0 + at)


def test_activity_counts_each_interval_of_the_window(store: JobStore) -> None:
    run(store, "a", timedelta(minutes=10), 5)
    run(store, "a", timedelta(minutes=20), 15)
    run(store, "a", 2 * HOUR + timedelta(minutes=1), 1)
    run(store, "b", 23 * HOUR + timedelta(minutes=59), 30)
    run(store, "b", 25 * HOUR, 1)  # after the window
    failed_attempt(store, "a", timedelta(minutes=30))
    failed_attempt(store, "c", 3 * HOUR)
    found = store.activity(Window(T0, HOUR, 24))
    assert set(found) == {"a", "b", "c"}
    a = found["a"]
    assert a.completed[:4] == [2, 0, 1, 0] and a.completed_total == 3
    assert a.failed[0] == 1 and a.failed_total == 1
    assert a.run_seconds_total == pytest.approx(21, abs=0.01)
    assert a.run_seconds_max == pytest.approx(15, abs=0.01)
    assert a.mean_run_seconds == pytest.approx(7, abs=0.01)
    assert a.failure_rate == 0.25
    b = found["b"]
    assert b.completed[23] == 1 and b.completed_total == 1  # the one after it is left out
    assert found["c"].completed_total == 0 and found["c"].failed[3] == 1
    days = store.activity(Window(T0 - 6 * 24 * HOUR, 24 * HOUR, 7))
    assert days["b"].completed[6] == 1 and days["b"].completed_total == 1
    assert days["a"].completed == [0, 0, 0, 0, 0, 0, 3]
