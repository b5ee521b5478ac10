"""On PostgreSQL a grant is stamped with the server's clock, read in the granting statement
(ADR 0053, "Whose clock"): processes whose estimates of that clock disagree by milliseconds
cannot let more than the limit into a window of the server's real time. Four threads, each with
its own engine and a clock deliberately off the server's (+30, −30, 0, +15 ms), hammer one key
in real time; the stamps the store returns are the grants' server times, and no window of the
period holds more than the limit. The grants, restamps and claim tokens are stamped between two
reads of the server's clock, whatever the caller's `now` says; SQLite has no server clock."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine, select, text

from dominus.db.engine import create_database_engine
from dominus.errors import JobAbortedError
from dominus.jobs import Limiters, RateLimit, SqlJobStore
from dominus.jobs.clock import DatabaseClock
from dominus.jobs.model import ClaimRequest
from dominus.jobs.rate_limit import moment_of
from dominus.jobs.sql.limits import Granted, RateLimitStore
from dominus.schema.tables import rate_limit_grants
from tests.support.clock import T0
from tests.support.jobs import new_job
from tests.support.rate_windows import most_in_a_window

pytestmark = pytest.mark.backends("postgresql")

LIMIT = RateLimit(20, 0.5)
# Each thread's clock is off the server's by this much: more than a real process's estimate
# (milliseconds), so that stamping with these clocks overfills windows at once.
SKEWS_MS = (30, -30, 0, 15)
# The run ends after this many grants (about 2.5 s at the limit): five periods' worth.
GRANTS = 5 * LIMIT.count


class Grants:
    """The stamps of every grant the threads got; the stop signal is set once there are
    enough."""

    def __init__(self, enough: int) -> None:
        self.stamps: list[datetime] = []
        self.stop = threading.Event()
        self._enough = enough
        self._lock = threading.Lock()

    def add(self, stamp: datetime) -> None:
        with self._lock:
            self.stamps.append(stamp)
            if len(self.stamps) >= self._enough:
                self.stop.set()


class RecordingStore(RateLimitStore):
    """The real store with its default stamping, noting the stamp each grant returned."""

    def __init__(self, engine: Engine, grants: Grants) -> None:
        super().__init__(engine)
        self._grants = grants

    def grant(self, key: str, now: datetime) -> Granted | None:
        granted = super().grant(key, now)
        if granted is not None:
            self._grants.add(granted.at)
        return granted


class SkewedClock:
    """A process's estimate of the server's clock (`DatabaseClock`), off by `skew`."""

    def __init__(self, engine: Engine, skew: timedelta) -> None:
        self._clock = DatabaseClock(engine)
        self._skew = skew

    def __call__(self) -> datetime:
        return self._clock() + self._skew


def server_now(engine: Engine) -> datetime:
    with engine.connect() as connection:
        moment: datetime = connection.execute(text("SELECT clock_timestamp()")).scalar_one()
        return moment


def stamps_of(engine: Engine, key: str) -> list[datetime]:
    with engine.connect() as connection:
        rows = connection.execute(
            select(rate_limit_grants.c.granted_us)
            .where(rate_limit_grants.c.key == key, rate_limit_grants.c.granted_us > 0)
            .order_by(rate_limit_grants.c.granted_us)
        )
        return [moment_of(row[0]) for row in rows]


def between_server_reads(engine: Engine, act: Callable[[], object]) -> tuple[datetime, datetime]:
    before = server_now(engine)
    act()
    return before, server_now(engine)


def a_key() -> str:
    return f"servclock:{uuid.uuid4().hex[:12]}"


def test_processes_with_skewed_clocks_never_exceed_the_limit_in_server_time(
    engine: Engine, database_url: str
) -> None:
    key = a_key()
    Limiters.over(engine).configure(key, LIMIT)
    grants = Grants(GRANTS)
    failures: list[Exception] = []

    def hammer(skew_ms: int) -> None:
        own_engine = create_database_engine(database_url)
        clock = SkewedClock(own_engine, timedelta(milliseconds=skew_ms))
        limiters = Limiters(RecordingStore(own_engine, grants), clock)
        try:
            while True:
                limiters.acquire(key, grants.stop)
        except JobAbortedError:
            pass  # enough grants: the run is over
        except Exception as error:  # ends the run; the test reports it
            failures.append(error)
            grants.stop.set()
        finally:
            own_engine.dispose()

    threads = [threading.Thread(target=hammer, args=(skew,)) for skew in SKEWS_MS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert len(grants.stamps) >= GRANTS
    period = timedelta(seconds=LIMIT.period_seconds)
    assert most_in_a_window(grants.stamps, period) <= LIMIT.count


def test_a_grant_and_its_restamp_take_the_servers_time_not_the_callers(engine: Engine) -> None:
    key = a_key()
    store = RateLimitStore(engine)
    store.configure(key, LIMIT, server_now(engine))
    callers_now = T0  # years off the server's clock
    granted: list[Granted | None] = []
    before, after = between_server_reads(
        engine, lambda: granted.append(store.grant(key, callers_now))
    )
    [grant] = granted
    assert grant is not None
    assert before <= grant.at <= after
    assert stamps_of(engine, key) == [grant.at]

    before, after = between_server_reads(
        engine, lambda: store.restamp(key, grant.slot, grant.at, callers_now)
    )
    [restamped] = stamps_of(engine, key)
    assert grant.at < restamped
    assert before <= restamped <= after


def test_the_claims_tokens_take_the_servers_time_not_the_claims(engine: Engine) -> None:
    """Through `claim` and through the worker loop's `settle`, whose second claim takes its
    tokens in its own pipeline."""
    key = a_key()
    store = SqlJobStore(engine)
    Limiters.over(engine).configure(key, RateLimit(10, 60))
    claims_now = T0  # years off the server's clock; the jobs are due at it
    store.enqueue([replace(new_job(), rate_key=key) for _ in range(6)], claims_now)
    loop = ClaimRequest("loop", ["diag.noop"], 2)

    # Each claim at a moment of its own, as the loop's ticks are: the prepaid take finds its
    # claim's rows by their `now`.
    first, second, third = (claims_now + timedelta(seconds=tick) for tick in range(3))

    def claim_three_ways() -> None:
        assert len(store.claim("w1", ["diag.noop"], 2, first)) == 2
        assert len(store.settle([], second, claim_for=loop)[1]) == 2
        assert len(store.settle([], third, claim_for=loop)[1]) == 2  # prepaid tokens

    before, after = between_server_reads(engine, claim_three_ways)
    stamps = stamps_of(engine, key)
    assert len(stamps) == 6
    assert all(before <= stamp <= after for stamp in stamps)


@pytest.mark.backends("sqlite")
def test_sqlite_has_no_server_clock_to_stamp_with(engine: Engine) -> None:
    with pytest.raises(ValueError, match="no server clock"):
        RateLimitStore(engine, server_clock=True)
    with pytest.raises(ValueError, match="no server clock"):
        SqlJobStore(engine, server_clock=True)
