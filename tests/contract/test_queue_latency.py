"""The queue's latency is how long the oldest *due* pending job has waited since it became due
(Sidekiq's latency): a job scheduled hours ahead, or one waiting out a retry backoff, is not
late, so it must not make the figure climb and a latency alert fire for nothing. The old
"oldest pending" age (since creation, every pending job) is still reported beside it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dominus.jobs import JobStore
from tests.support.clock import T0
from tests.support.jobs import claimed_job, fail, new_job

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_scheduled_and_backing_off_jobs_add_no_latency(store: JobStore) -> None:
    # Failed at T0, retried in an hour: pending, not due.
    job = claimed_job(store, max_attempts=3)
    store.settle([fail(job.claim, retry_in=3600)], T0)
    # Enqueued at T0 to run four hours later: pending, not due.
    store.enqueue([new_job(run_at_offset=4 * 3600)], T0)
    now = T0 + timedelta(minutes=10)
    stats = store.queue_stats(now, alive_since=T0)
    assert stats.by_status["pending"] == 2
    assert stats.latency_seconds is None  # nothing is due: nothing is late
    assert stats.oldest_pending_age_seconds == 600  # since creation, as before

    # A job due at T0 + 9 min: it has waited a minute, the only latency there is.
    store.enqueue([new_job(run_at_offset=9 * 60)], T0 + timedelta(minutes=2))
    assert store.queue_stats(now, alive_since=T0).latency_seconds == 60

    # Once the backoff is over the retried job is due, and late since its run_at.
    later = T0 + timedelta(seconds=3600 + 30)
    assert store.queue_stats(later, alive_since=T0).latency_seconds == 3600 + 30 - 9 * 60


def test_a_job_enqueued_with_a_past_run_at_is_due_since_it_was_created(store: JobStore) -> None:
    """It cannot have waited before it existed (a scheduler's fire time, a backfill)."""
    store.enqueue([new_job(run_at_offset=0)], T0 + timedelta(minutes=5))
    stats = store.queue_stats(T0 + timedelta(minutes=6), alive_since=T0)
    assert stats.latency_seconds == 60
