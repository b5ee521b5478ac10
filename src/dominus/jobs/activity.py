"""What each job type did over a window (the History page, ADR 0054): jobs completed and
attempts failed per interval, and the run time of the completed ones.

The `job_metrics` counters hold totals with no time in them, so a window of 24 hours or 7 days
is read from the rows that carry times: a completed job's `finished_at` (and `started_at`, for
its run time) and a failed attempt's event. Those are kept JOB_RETENTION_DAYS (7 by default),
so a window longer than the retention shows only what is kept."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Window:
    start: datetime
    bucket: timedelta
    buckets: int

    @property
    def end(self) -> datetime:
        return self.start + self.bucket * self.buckets

    def bounds(self, index: int) -> tuple[datetime, datetime]:
        return self.start + self.bucket * index, self.start + self.bucket * (index + 1)


@dataclass
class TypeActivity:
    """One job type over a window: per interval, jobs completed and attempts failed."""

    job_type: str
    completed: list[int]
    failed: list[int]
    run_seconds_total: float = 0.0
    run_seconds_max: float | None = None

    @classmethod
    def empty(cls, job_type: str, buckets: int) -> TypeActivity:
        return cls(job_type, [0] * buckets, [0] * buckets)

    @property
    def completed_total(self) -> int:
        return sum(self.completed)

    @property
    def failed_total(self) -> int:
        return sum(self.failed)

    @property
    def failure_rate(self) -> float | None:
        """Failed attempts over finished attempts; None without any."""
        finished = self.completed_total + self.failed_total
        return None if finished == 0 else self.failed_total / finished

    @property
    def mean_run_seconds(self) -> float | None:
        total = self.completed_total
        return None if total == 0 else self.run_seconds_total / total
