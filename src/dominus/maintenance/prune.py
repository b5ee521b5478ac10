"""PRUNE: delete expired rows rule by rule (`prune_rules`), in bounded steps.

A step takes PRUNE_BATCH_SIZE rows at most, and half as many after a step that took more than
50 ms (`StepSize`), so a slow or loaded machine holds the write lock for shorter steps, not
longer ones. Between two steps the pruner checks its abort signal and pauses about as long as
the step took (at least 2 ms, at most 100 ms): on SQLite a writer waiting for the lock polls for
it (the busy handler sleeps between tries), and a pruner taking the lock again at once could
keep it from ever getting it. So a worker or the API waits at most about one step for its
write, however many rows go (bench/prune_lock.py measures it). A dry run counts the same
predicates in one read-only transaction and deletes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from dominus.jobs.abort import AbortSignal
from dominus.jobs.documents import timestamp
from dominus.jobs.metrics_model import HISTORY_KEPT
from dominus.maintenance.prune_rules import (
    ALL_TABLES,
    Retention,
    StepSize,
    cutoff,
    prune_rules,
    read_step,
)
from dominus.maintenance.settings import MaintenanceSettings

MIN_PAUSE_SECONDS = 0.002
MAX_PAUSE_SECONDS = 0.1

# Told after every step: the rule's name and the counts so far (every table).
PruneProgress = Callable[[str, dict[str, int]], None]


def _no_progress(_rule: str, _counts: dict[str, int]) -> None:
    return None


def retention_from(settings: MaintenanceSettings, **overrides: int | None) -> Retention:
    values = {
        "job_days": settings.JOB_RETENTION_DAYS,
        "dead_letter_days": settings.DLQ_RETENTION_DAYS,
        "pipeline_run_days": settings.PIPELINE_RUN_RETENTION_DAYS,
    }
    values.update({name: value for name, value in overrides.items() if value is not None})
    return Retention(**values)


@dataclass(frozen=True)
class PruneReport:
    dry_run: bool
    counts: dict[str, int]  # table → rows deleted (or that a prune would delete)
    retention: Retention
    now: datetime
    steps: int
    duration_seconds: float

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def document(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "counts": self.counts,
            "total": self.total,
            "retention": self.retention.document(),
            "cutoffs": {
                "jobs": timestamp(cutoff(self.now, self.retention.job_days)),
                "dead_letters": timestamp(cutoff(self.now, self.retention.dead_letter_days)),
                "pipeline_runs": timestamp(cutoff(self.now, self.retention.pipeline_run_days)),
                "job_history": timestamp(self.now - HISTORY_KEPT),
            },
            "steps": self.steps,
            "duration_seconds": round(self.duration_seconds, 3),
        }


def prune(
    engine: Engine,
    retention: Retention,
    now: datetime,
    *,
    batch_size: int,
    dry_run: bool = False,
    abort: AbortSignal | None = None,
    on_progress: PruneProgress = _no_progress,
) -> PruneReport:
    """Delete (or with `dry_run` count) what the retention lets go. Raises JobAbortedError
    between two steps once `abort` is set; what was deleted until then stays deleted."""
    started = time.monotonic()
    stop = abort or AbortSignal()
    rules = prune_rules(retention, now)
    counts = dict.fromkeys(ALL_TABLES, 0)
    steps = 0
    if dry_run:
        stop.raise_if_set()
        # One read transaction: every count sees the same moment.
        found = read_step(engine, lambda conn: [each.count(conn) for each in rules])
        for rule, rule_counts in zip(rules, found, strict=True):
            counts.update(rule_counts)
            on_progress(rule.name, dict(counts))
    else:
        size = StepSize(batch_size)
        for rule in rules:
            batches = rule.batches(engine, size)
            while True:
                stop.raise_if_set()
                step_started = time.monotonic()
                deleted = next(batches, None)
                if deleted is None:
                    break
                steps += 1
                for table, rows in deleted.items():
                    counts[table] = counts.get(table, 0) + rows
                on_progress(rule.name, dict(counts))
                took = time.monotonic() - step_started
                size.observe(took)
                stop.wait(min(max(took, MIN_PAUSE_SECONDS), MAX_PAUSE_SECONDS))
    return PruneReport(dry_run, counts, retention, now, steps, time.monotonic() - started)
