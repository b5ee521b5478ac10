"""PRUNE on both backends: the counts per table on seeded data, a dry run that counts the same
and deletes nothing, jobs never pruned (pending, running, referred to by a dead letter), metrics
untouched (but the job history's expired hours), retention 0 keeping everything the settings
govern, abort between steps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, select

from dominus.errors import JobAbortedError
from dominus.jobs import SqlJobStore
from dominus.jobs.abort import AbortReason, AbortSignal
from dominus.jobs.metrics_model import HISTORY_KEPT, HISTORY_NAMES, history_hour
from dominus.maintenance.prune import prune
from dominus.maintenance.prune_rules import Retention
from dominus.schema.tables import candidates, job_metrics, job_queue, pipeline_runs
from tests.support.seeding import EXPECTED_COUNTS, column, seed, table_counts

pytestmark = pytest.mark.backends("sqlite", "postgresql")


NOW = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
DEFAULT = Retention(job_days=7, dead_letter_days=30, pipeline_run_days=180)


def test_prune_deletes_what_the_retentions_let_go(engine: Engine) -> None:
    seeded = seed(engine, NOW)
    before = table_counts(engine)
    counters = SqlJobStore(engine).metric_totals().counters
    report = prune(engine, DEFAULT, NOW, batch_size=1000)
    assert not report.dry_run
    assert report.counts == EXPECTED_COUNTS
    after = table_counts(engine)
    for table, deleted in EXPECTED_COUNTS.items():
        if table != "job_metrics":  # where SQLite's enqueue fold also adds rows (ADR 0036)
            assert after[table] == before[table] - deleted, table
    # The job history: the seeded hour within HISTORY_KEPT stays, beside the hours the first
    # fold took from the jobs before they went (ADR 0060); the older one went.
    history = select(job_metrics.c.bucket).where(job_metrics.c.name.in_(HISTORY_NAMES))
    hours = column(engine, history)
    assert history_hour(NOW - HISTORY_KEPT + timedelta(hours=1)) in hours
    assert min(hours) >= history_hour(NOW - HISTORY_KEPT)
    assert column(engine, select(job_queue.c.id)) == sorted(seeded.kept_jobs.values())
    assert column(engine, select(pipeline_runs.c.id)) == sorted(seeded.kept_runs)
    assert column(engine, select(candidates.c.domain)) == ["beta.com", "delta.com", "epsilon.com"]
    # The counters never fall (SQLite counts the jobs that go before they go, ADR 0036).
    assert SqlJobStore(engine).metric_totals().counters == counters


def test_a_dry_run_counts_the_same_and_deletes_nothing(engine: Engine) -> None:
    seed(engine, NOW)
    before = table_counts(engine)
    report = prune(engine, DEFAULT, NOW, batch_size=1000, dry_run=True)
    assert report.dry_run and report.steps == 0
    assert report.counts == EXPECTED_COUNTS
    assert table_counts(engine) == before
    assert prune(engine, DEFAULT, NOW, batch_size=1000).counts == report.counts


def test_small_batches_delete_the_same_rows_in_more_steps(engine: Engine) -> None:
    seed(engine, NOW)
    progress: list[tuple[str, dict[str, int]]] = []
    report = prune(
        engine,
        DEFAULT,
        NOW,
        batch_size=1,
        on_progress=lambda rule, counts: progress.append((rule, counts)),
    )
    assert report.counts == EXPECTED_COUNTS
    # One step per job, dead letter, run, candidate, score or checkpoint row and history row.
    assert report.steps == 1 + 4 + 3 + 2 + 1 + 2 + 1
    assert [rule for rule, _ in progress][:5] == ["dead letters", "jobs", "jobs", "jobs", "jobs"]
    assert progress[-1][1] == EXPECTED_COUNTS


def test_active_and_dead_lettered_jobs_are_never_pruned(engine: Engine) -> None:
    seeded = seed(engine, NOW)
    forever = Retention(job_days=1, dead_letter_days=0, pipeline_run_days=0)
    report = prune(engine, forever, datetime(2090, 1, 1, tzinfo=UTC), batch_size=1000)
    left = column(engine, select(job_queue.c.id))
    for name in (
        "pending since 100 days",
        "running since 100 days",
        "failed, dead letter 20 days old",
        "failed, dead letter 40 days old",  # DLQ_RETENTION_DAYS=0 keeps its entry: it stays
        "completed 50 days ago, a dead letter refers to it",
    ):
        assert seeded.kept_jobs.get(name, seeded.pruned_jobs.get(name)) in left, name
    assert report.counts["job_queue"] == 4  # the three other finished ones, and the purged one
    assert report.counts["dead_letter_jobs"] == report.counts["pipeline_runs"] == 0


def test_a_retention_of_zero_keeps_everything(engine: Engine) -> None:
    seed(engine, NOW)
    before = table_counts(engine)
    report = prune(engine, Retention(0, 0, 0), NOW, batch_size=1000)
    # The job history's retention is not a setting: its hours past HISTORY_KEPT still go.
    assert report.total == report.counts["job_metrics"] == 1
    assert table_counts(engine) == {**before, "job_metrics": before["job_metrics"] - 1}


def test_prune_stops_between_steps_when_aborted(engine: Engine) -> None:
    seed(engine, NOW)
    abort = AbortSignal()

    def abort_after_the_second_step(_rule: str, counts: dict[str, int]) -> None:
        if sum(counts.values()) >= 2:
            abort.set(AbortReason.CANCELLED)

    with pytest.raises(JobAbortedError):
        prune(
            engine,
            DEFAULT,
            NOW,
            batch_size=1,
            abort=abort,
            on_progress=abort_after_the_second_step,
        )
    remaining = prune(engine, DEFAULT, NOW, batch_size=1000, dry_run=True).counts
    assert 0 < sum(remaining.values()) < sum(EXPECTED_COUNTS.values())
