"""Monotonic job counters and duration histograms (table `job_metrics`, migration 0003).

Each transition adds to its counters in its own transaction (through its backend's upsert,
`Backend.add_metrics`), so the counters agree with the job rows and never fall (pruning finished
jobs does not touch them). Rows are sharded by writer so that concurrent workers do not
serialise on one hot row; reading adds the shards up.
"""

from __future__ import annotations

import bisect
import os
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping

from sqlalchemy import Connection, func, select

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
    INFINITY,
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
    "ENQUEUED",
    "FAILED",
    "RECLAIMED",
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

    def completed(self, job_type: str, duration_seconds: float | None) -> None:
        self.add(COMPLETED, job_type)
        if duration_seconds is not None:
            duration = max(0.0, duration_seconds)
            index = bisect.bisect_left(DURATION_BUCKETS, duration)
            bucket = INFINITY if index == len(DURATION_BUCKETS) else BUCKET_LABELS[index]
            self.add(DURATION_BUCKET, job_type, bucket=bucket)
            self.add(DURATION_SUM, job_type, duration)
            self.add(DURATION_COUNT, job_type)

    def enqueued(self, job_types: Iterable[str]) -> Increments:
        for job_type in job_types:
            self.add(ENQUEUED, job_type)
        return self

    def completions(self, outcomes: Iterable[AttemptOutcome]) -> Increments:
        for outcome in outcomes:
            if isinstance(outcome, Completed):
                self.completed(outcome.job_type, outcome.duration_seconds)
        return self

    def rows(self, shard: int) -> list[tuple[str, str, str, int, float]]:
        return [
            (name, job, bucket, shard, value) for (name, job, bucket), value in self.values.items()
        ]

    def __bool__(self) -> bool:
        return bool(self.values)


def _label(bound: float) -> str:
    return f"{bound:g}"


BUCKET_LABELS = tuple(_label(bound) for bound in DURATION_BUCKETS)


def shard_for(writer: str | None = None) -> int:
    """A writer's shard: stable per worker id, else per process."""
    key = writer if writer is not None else str(os.getpid())
    return zlib.crc32(key.encode()) % SHARDS


def read(connection: Connection, uncounted_enqueues: Mapping[str, int]) -> MetricTotals:
    """The totals, with the enqueues not yet in the stored counters added (ADR 0036)."""
    rows = connection.execute(
        select(
            job_metrics.c.name,
            job_metrics.c.job_type,
            job_metrics.c.bucket,
            func.sum(job_metrics.c.value),
        )
        .where(job_metrics.c.name != ENQUEUED_COUNTED_THROUGH)
        .group_by(job_metrics.c.name, job_metrics.c.job_type, job_metrics.c.bucket)
    ).all()
    counters: dict[tuple[str, str], float] = {}
    buckets: defaultdict[str, dict[str, float]] = defaultdict(dict)
    sums: dict[str, float] = {}
    counts: dict[str, float] = {}
    for name, job_type, bucket, total in rows:
        if name == DURATION_BUCKET:
            buckets[job_type][bucket] = float(total)
        elif name == DURATION_SUM:
            sums[job_type] = float(total)
        elif name == DURATION_COUNT:
            counts[job_type] = float(total)
        else:
            counters[(name, job_type)] = float(total)
    for job_type, count in uncounted_enqueues.items():
        counters[(ENQUEUED, job_type)] = counters.get((ENQUEUED, job_type), 0.0) + count
    histograms = {job_type: _cumulative(per_bucket) for job_type, per_bucket in buckets.items()}
    durations = {
        job_type: (sums.get(job_type, 0.0), counts.get(job_type, 0.0)) for job_type in counts
    }
    return MetricTotals(counters, histograms, durations)


def _cumulative(per_bucket: Mapping[str, float]) -> list[tuple[str, float]]:
    running = 0.0
    result = []
    for label in [*(_label(bound) for bound in DURATION_BUCKETS), INFINITY]:
        running += per_bucket.get(label, 0.0)
        result.append((label, running))
    return result
