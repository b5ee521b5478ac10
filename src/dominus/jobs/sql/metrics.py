"""Monotonic job counters and duration histograms (table `job_metrics`, migration 0003).

Each transition adds to its counters in its own transaction (through its backend's upsert,
`Backend.add_metrics`), so the counters agree with the job rows and never fall (pruning finished
jobs does not touch them). Rows are sharded by writer so that concurrent workers do not
serialise on one hot row; reading adds the shards up.

Beside the counters, rows that are not totals (readings leave them out): SQLite's enqueue mark
(ADR 0036) and the hourly job history (ADR 0060, `dominus.jobs.sql.history_fold`), which is
folded from these counters off the hot path.
"""

from __future__ import annotations

import bisect
import functools
import os
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, Select, func, select

from dominus.jobs.metrics_model import (
    CANCELLED,
    COMPLETED,
    DEAD_LETTERED,
    DURATION_BUCKET,
    DURATION_BUCKETS,
    DURATION_COUNT,
    DURATION_SUM,
    ENQUEUED,
    ENQUEUED_COUNTED_THROUGH,
    FAILED,
    HISTORY_FOLDED,
    HISTORY_NAMES,
    INFINITY,
    PICKUP_BUCKET,
    PICKUP_BUCKETS,
    PICKUP_COUNT,
    PICKUP_SUM,
    RECLAIMED,
    MetricTotals,
)
from dominus.jobs.model import AttemptOutcome, Completed
from dominus.jobs.sql.tables import job_metrics

__all__ = [
    "BUCKET_LABELS",
    "CANCELLED",
    "COMPLETED",
    "DEAD_LETTERED",
    "DURATIONS",
    "ENQUEUED",
    "FAILED",
    "PICKUPS",
    "PICKUP_LABELS",
    "RECLAIMED",
    "Histogram",
    "Increments",
    "read",
    "shard_for",
]

SHARDS = 16

Key = tuple[str, str, str]  # (name, job_type, bucket)


class Increments:
    """Counter increments gathered during one transaction, written in one statement."""

    def __init__(self) -> None:
        self.values: defaultdict[Key, float] = defaultdict(float)

    def add(self, name: str, job_type: str, amount: float = 1.0, bucket: str = "") -> None:
        self.values[(name, job_type, bucket)] += amount

    def completed(
        self, job_type: str, duration_seconds: float | None, pickup_seconds: float | None = None
    ) -> None:
        # Once per job completed: the dictionary written directly, not through `add`.
        self.values[(COMPLETED, job_type, "")] += 1.0
        self.observe(DURATIONS, job_type, duration_seconds)
        self.observe(PICKUPS, job_type, pickup_seconds)

    def observe(self, histogram: Histogram, job_type: str, seconds: float | None) -> None:
        """One observation of `histogram` (none when `seconds` is unknown)."""
        if seconds is None:
            return
        seconds = max(0.0, seconds)
        values = self.values
        values[(histogram.bucket, job_type, histogram.label_for(seconds))] += 1.0
        values[(histogram.sum, job_type, "")] += seconds
        values[(histogram.count, job_type, "")] += 1.0

    def enqueued(self, job_types: Iterable[str]) -> Increments:
        for job_type in job_types:
            self.add(ENQUEUED, job_type)
        return self

    def completions(self, outcomes: Iterable[AttemptOutcome]) -> Increments:
        for outcome in outcomes:
            if isinstance(outcome, Completed):
                self.completed(outcome.job_type, outcome.duration_seconds, outcome.pickup_seconds)
        return self

    def rows(self, shard: int) -> list[tuple[str, str, str, int, float]]:
        return [
            (name, job, bucket, shard, value) for (name, job, bucket), value in self.values.items()
        ]

    def __bool__(self) -> bool:
        return bool(self.values)


def _label(bound: float) -> str:
    return f"{bound:g}"


@dataclass(frozen=True)
class Histogram:
    """A histogram's stored names and its buckets' upper bounds (seconds)."""

    bucket: str
    sum: str
    count: str
    bounds: Sequence[float]

    @functools.cached_property
    def labels(self) -> tuple[str, ...]:
        return tuple(_label(bound) for bound in self.bounds)

    @functools.cached_property
    def _labels_and_infinity(self) -> tuple[str, ...]:
        return (*self.labels, INFINITY)

    def label_for(self, seconds: float) -> str:
        """The `le` label of the lowest bucket holding `seconds` (a bound holds its own value).
        Labels are written once: this runs twice for every job completed."""
        return self._labels_and_infinity[bisect.bisect_left(self.bounds, seconds)]


DURATIONS = Histogram(DURATION_BUCKET, DURATION_SUM, DURATION_COUNT, DURATION_BUCKETS)
PICKUPS = Histogram(PICKUP_BUCKET, PICKUP_SUM, PICKUP_COUNT, PICKUP_BUCKETS)
BUCKET_LABELS = DURATIONS.labels
PICKUP_LABELS = PICKUPS.labels


def shard_for(writer: str | None = None) -> int:
    """A writer's shard: stable per worker id, else per process."""
    key = writer if writer is not None else str(os.getpid())
    return zlib.crc32(key.encode()) % SHARDS


def summed(*where: ColumnElement[bool]) -> Select[str, str, str, float]:
    """(name, job_type, bucket, value) of the rows `where` picks, added up over their shards."""
    name, job_type, bucket = job_metrics.c.name, job_metrics.c.job_type, job_metrics.c.bucket
    total = func.sum(job_metrics.c.value)
    return select(name, job_type, bucket, total).where(*where).group_by(name, job_type, bucket)


def read(connection: Connection, uncounted_enqueues: Mapping[str, int]) -> MetricTotals:
    """The totals, with the enqueues not yet in the stored counters added (ADR 0036)."""
    rows = connection.execute(summed(job_metrics.c.name.not_in(_NOT_TOTALS))).all()
    counters: dict[tuple[str, str], float] = {}
    # Histogram parts: (histogram name, job_type) → bucket label (or "" for sum and count) → total.
    parts: defaultdict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for name, job_type, bucket, total in rows:
        if name in _HISTOGRAM_PARTS:
            parts[(name, job_type)][bucket] = float(total)
        else:
            counters[(name, job_type)] = float(total)
    for job_type, count in uncounted_enqueues.items():
        counters[(ENQUEUED, job_type)] = counters.get((ENQUEUED, job_type), 0.0) + count
    histograms, durations = _histogram(DURATIONS, parts)
    pickup_histograms, pickups = _histogram(PICKUPS, parts)
    return MetricTotals(counters, histograms, durations, pickup_histograms, pickups)


# Rows that are not totals: the enqueue mark, the hourly history and its fold marks.
_NOT_TOTALS = (ENQUEUED_COUNTED_THROUGH, HISTORY_FOLDED, *HISTORY_NAMES)

_HISTOGRAM_PARTS = frozenset(
    name
    for histogram in (DURATIONS, PICKUPS)
    for name in (histogram.bucket, histogram.sum, histogram.count)
)


def _histogram(
    histogram: Histogram, parts: Mapping[tuple[str, str], Mapping[str, float]]
) -> tuple[dict[str, list[tuple[str, float]]], dict[str, tuple[float, float]]]:
    """Per job type: `histogram`'s cumulative buckets, and its (sum, count)."""
    buckets = {
        job_type: _cumulative(histogram, per_bucket)
        for (name, job_type), per_bucket in parts.items()
        if name == histogram.bucket
    }
    totals = {
        job_type: (
            parts.get((histogram.sum, job_type), {}).get("", 0.0),
            per_count.get("", 0.0),
        )
        for (name, job_type), per_count in parts.items()
        if name == histogram.count
    }
    return buckets, totals


def _cumulative(histogram: Histogram, per_bucket: Mapping[str, float]) -> list[tuple[str, float]]:
    running = 0.0
    result = []
    for label in [*histogram.labels, INFINITY]:
        running += per_bucket.get(label, 0.0)
        result.append((label, running))
    return result
