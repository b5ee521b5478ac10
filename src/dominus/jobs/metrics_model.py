"""The job metrics every backend keeps (see `dominus.jobs.sql.metrics` for how)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
