"""The rate limit's promise, as a property (ADR 0053), on SQLite and PostgreSQL: eight simulated
workers, each with its own `Limiters` (on two engines) and a clock of its own a little behind
the others, ask for grants of one key as fast as they are let, on a fake clock (no sleeping:
each waits exactly what `try_acquire` told it, plus a drawn delay). The grants, by the times
they were stamped with, never number more than the limit in any window of the period, and
reach at least 90 % of it over the run. On PostgreSQL the stores stamp with the workers' clocks
(`server_clock=False`), as on SQLite: the server's clock cannot be simulated, and the argument
for the guarantee is the same whichever clock stamps (test_rate_limit_server_clock.py checks
the server's, in real time)."""

from __future__ import annotations

import heapq
import random
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from dominus.db.engine import create_database_engine
from dominus.jobs import Limiters, RateLimit
from dominus.jobs.sql.limits import Granted, RateLimitStore
from tests.support.clock import T0
from tests.support.rate_windows import most_in_a_window

pytestmark = pytest.mark.backends("sqlite", "postgresql")

WORKERS = 8
PERIODS = 12  # simulated run, in periods
# Each worker's clock lags the true time by up to this share of the period, and each comes
# back up to this share late after a grant or a wait (work, scheduling): together at most 6 %
# of a slot's cycle, so the run must reach 90 % of the limit.
SKEW = 0.03


class RecordingStore(RateLimitStore):
    """The real store, stamping with the simulated clocks, noting the time each grant it made
    was stamped with."""

    def __init__(self, engine: Engine, stamps: list[datetime]) -> None:
        super().__init__(engine, server_clock=False)
        self.stamps = stamps

    def grant(self, key: str, now: datetime) -> Granted | None:
        granted = super().grant(key, now)
        if granted is not None:
            self.stamps.append(granted.at)
        return granted


class SimulatedTime:
    def __init__(self) -> None:
        self.now = T0

    def clock_behind(self, lag: timedelta) -> ClockBehind:
        return ClockBehind(self, lag)


class ClockBehind:
    def __init__(self, time: SimulatedTime, lag: timedelta) -> None:
        self.time = time
        self.lag = lag

    def __call__(self) -> datetime:
        return self.time.now - self.lag


@pytest.fixture
def engines(engine: Engine, database_url: str) -> Iterator[tuple[Engine, Engine]]:
    other = create_database_engine(database_url)
    yield engine, other
    other.dispose()


@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    count=st.integers(min_value=1, max_value=8),
    period_seconds=st.sampled_from([0.05, 1.0, 7.5]),
    lags=st.lists(st.floats(min_value=0, max_value=SKEW), min_size=WORKERS, max_size=WORKERS),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_grants_never_exceed_the_limit_and_reach_ninety_percent(
    engines: tuple[Engine, Engine],
    count: int,
    period_seconds: float,
    lags: list[float],
    seed: int,
) -> None:
    key = f"sim:{uuid.uuid4().hex[:12]}"
    limit = RateLimit(count, period_seconds)
    period = timedelta(seconds=limit.period_seconds)
    time = SimulatedTime()
    stamps: list[datetime] = []
    workers = [
        Limiters(
            RecordingStore(engines[index % 2], stamps),
            time.clock_behind(lag * period),
        )
        for index, lag in enumerate(lags)
    ]
    workers[0].configure(key, limit)
    draw = random.Random(seed)

    def late() -> timedelta:
        return draw.uniform(0, SKEW) * period

    due: list[tuple[datetime, int]] = [(T0 + late(), index) for index in range(WORKERS)]
    heapq.heapify(due)
    end = T0 + PERIODS * period
    while due[0][0] < end:
        at, index = heapq.heappop(due)
        time.now = at
        wait = workers[index].try_acquire(key)
        waited = timedelta(0) if wait is None else timedelta(seconds=wait)
        heapq.heappush(due, (at + waited + late(), index))

    assert most_in_a_window(stamps, period) <= count
    # Saturated from the first grant on: the whole run but its first period holds
    # (PERIODS - 1) full windows' worth.
    settled = [stamp for stamp in stamps if stamp >= T0 + period]
    assert len(settled) >= 0.9 * count * (PERIODS - 1)
