"""What each job type did over a window (the History page, ADR 0060): jobs completed and
attempts failed per interval, jobs dead-lettered, and the run time of the completed ones.

Read from the hourly history folded from the `job_metrics` counters per UTC hour
(`dominus.jobs.sql.history_fold`). So a window's intervals are whole hours (or days of them),
and pruning finished jobs leaves the history as it was; PRUNE keeps HISTORY_KEPT (8 days) of
it."""

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
    dead_lettered: int = 0
    run_seconds_total: float = 0.0  # of the completions (those recorded with a run time)

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
