"""Throughput and failure rate over the last hour, from the `job_metrics` counters (ADR 0023).

The counters are totals since the database began, with no time in them, so the rate over an
hour is the difference between two readings an hour apart. Each `serve` process reads them once
a minute (one small grouped query) and keeps the last hour of readings in memory; the chart is
the per-minute differences, plus the minute under way (the latest reading against the current
totals). A process that started less than an hour ago shows what it has seen, and says since
when. Nothing is written: the counters stay the source of truth, and every process reading the
same database draws the same bars for the minutes it has seen.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import anyio

from dominus.errors import DatabaseError
from dominus.jobs.metrics_model import COMPLETED, FAILED, MetricTotals

log = logging.getLogger("dominus.web")

SAMPLE_SECONDS = 60.0
WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class Reading:
    at: datetime
    completed: float
    failed: float


@dataclass(frozen=True)
class Bar:
    """One interval between readings: jobs completed and attempts failed in it."""

    start: datetime
    end: datetime
    completed: int
    failed: int


@dataclass(frozen=True)
class Throughput:
    bars: list[Bar]
    since: datetime | None  # the oldest reading used (None: no reading yet)

    @property
    def completed(self) -> int:
        return sum(bar.completed for bar in self.bars)

    @property
    def failed(self) -> int:
        return sum(bar.failed for bar in self.bars)

    @property
    def failure_rate(self) -> float | None:
        """Failed attempts over finished attempts (completed + failed); None without any."""
        finished = self.completed + self.failed
        return None if finished == 0 else self.failed / finished


def reading(at: datetime, totals: MetricTotals) -> Reading:
    completed = sum(value for (name, _), value in totals.counters.items() if name == COMPLETED)
    failed = sum(value for (name, _), value in totals.counters.items() if name == FAILED)
    return Reading(at, completed, failed)


class ThroughputWindow:
    """The readings of the last hour (thread-safe: the sampler adds, pages read)."""

    def __init__(self) -> None:
        self._readings: deque[Reading] = deque()
        self._lock = threading.Lock()

    def add(self, latest: Reading) -> None:
        with self._lock:
            self._readings.append(latest)
            # Keep one reading at or before the window's start, so the first bar is whole.
            while len(self._readings) > 1 and self._readings[1].at <= latest.at - WINDOW:
                self._readings.popleft()

    def latest(self) -> Reading | None:
        with self._lock:
            return self._readings[-1] if self._readings else None

    def throughput(self, current: Reading | None) -> Throughput:
        """The bars of the last hour, ending with the interval from the last reading to
        `current` (the totals read now), if given."""
        with self._lock:
            readings = list(self._readings)
        if current is not None and (not readings or current.at > readings[-1].at):
            readings.append(current)
        if current is not None:
            readings = [r for r in readings if r.at >= current.at - WINDOW - _SLACK] or readings
        bars = [
            Bar(
                before.at,
                after.at,
                max(0, round(after.completed - before.completed)),
                max(0, round(after.failed - before.failed)),
            )
            for before, after in itertools.pairwise(readings)
        ]
        return Throughput(bars, readings[0].at if readings else None)


_SLACK = timedelta(seconds=SAMPLE_SECONDS / 2)


async def sample_forever(
    window: ThroughputWindow,
    read_totals: Callable[[], MetricTotals],
    now: Callable[[], datetime],
    run_in_thread: Callable[[Callable[[], MetricTotals]], Awaitable[MetricTotals]],
    stopping: Callable[[], bool],
) -> None:
    """Read the counters every SAMPLE_SECONDS until cancelled; a database error skips one."""
    while not stopping():
        try:
            totals = await run_in_thread(read_totals)
        except DatabaseError as error:
            log.debug("throughput sample skipped: %s", error)
        except Exception:
            log.exception("throughput sample failed")
        else:
            window.add(reading(now(), totals))
        await anyio.sleep(SAMPLE_SECONDS)
