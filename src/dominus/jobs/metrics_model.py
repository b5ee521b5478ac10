"""The job metrics every backend keeps (see `dominus.jobs.sql.metrics` for how)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

# Upper bounds (seconds) of the job duration histogram; one more bucket, "+Inf", above them.
DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
# Upper bounds (seconds) of the pickup histogram: from when an attempt became due (its row's
# run_at, or its creation if later) to when its handler started. Finer at the low end, where a
# healthy queue picks up.
PICKUP_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0
)  # fmt: skip
INFINITY = "+Inf"

# Counter names.
ENQUEUED = "enqueued"
COMPLETED = "completed"
FAILED = "failed"  # attempts that raised or timed out
RECLAIMED = "reclaimed"  # attempts taken back from a silent worker
DEAD_LETTERED = "dead_lettered"
CANCELLED = "cancelled"
COUNTERS = (ENQUEUED, COMPLETED, FAILED, RECLAIMED, DEAD_LETTERED, CANCELLED)
# Not a counter: SQLite's bookkeeping row, the highest job id already in the `enqueued` counters
# (dominus.jobs.sql.sqlite_enqueue_counts, ADR 0036). Readings leave it out.
ENQUEUED_COUNTED_THROUGH = "enqueued_counted_through"
# Hourly history (the History page, ADR 0060): per job type and UTC hour, `bucket` holding the
# hour ("2030-01-01T12"). Folded from the counters off the hot path (what each counter gained
# since the last fold goes to the hour of the fold: `dominus.jobs.sql.history_fold`); PRUNE
# deletes hours older than HISTORY_KEPT.
HISTORY_COMPLETED = "history_completed"
HISTORY_RUN_SECONDS = "history_run_seconds"  # the run time of the hour's completions
HISTORY_FAILED = "history_failed"  # attempts failed or reclaimed, as FAILED + RECLAIMED
HISTORY_DEAD_LETTERED = "history_dead_lettered"
HISTORY_NAMES = (HISTORY_COMPLETED, HISTORY_RUN_SECONDS, HISTORY_FAILED, HISTORY_DEAD_LETTERED)
# Not a counter: the fold's bookkeeping. With `bucket` a counter's name, the counter's total
# at the last fold, per job type; with job type and bucket empty, the mark that the history
# has begun (the first fold took what the job rows showed, ADR 0060). Readings leave it out.
HISTORY_FOLDED = "history_folded"
# The 7-day window's first day began less than 7 days ago; a day more is a margin.
HISTORY_KEPT = timedelta(days=8)
# Histogram parts, stored per bucket (not cumulative) and made cumulative on reading.
DURATION_BUCKET = "duration_bucket"
DURATION_SUM = "duration_sum"
DURATION_COUNT = "duration_count"
PICKUP_BUCKET = "pickup_bucket"
PICKUP_SUM = "pickup_sum"
PICKUP_COUNT = "pickup_count"


@dataclass(frozen=True)
class MetricTotals:
    counters: Mapping[tuple[str, str], float]  # (name, job_type) → total
    histograms: Mapping[str, Sequence[tuple[str, float]]]  # job_type → cumulative (le, count)
    durations: Mapping[str, tuple[float, float]]  # job_type → (sum, count)
    # The pickup histogram, the same way.
    pickup_histograms: Mapping[str, Sequence[tuple[str, float]]] = field(default_factory=dict)
    pickups: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def counter(self, name: str, job_type: str) -> float:
        return self.counters.get((name, job_type), 0.0)


def history_hour(moment: datetime) -> str:
    """The `bucket` of the UTC hour holding `moment`: fixed width, so text order is time order."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H")


def hour_of(bucket: str) -> datetime:
    """The start of the hour a history `bucket` names."""
    return datetime.strptime(bucket, "%Y-%m-%dT%H").replace(tzinfo=UTC)
