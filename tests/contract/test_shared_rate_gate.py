"""The RDAP and WHOIS gate shared through the database (providers/shared_gate.py), on SQLite and
PostgreSQL: two processes' gates (each its own engine) share one count per server and one
pause; a server with two windows (a rate and a daily quota) is held by both; a key a limiter
cannot spell is still gated; a database that fails leaves this process's own gate in charge."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine

from dominus.db.engine import create_database_engine
from dominus.errors import DatabaseError
from dominus.jobs import Limiters
from dominus.providers.rate_gate import InProcessRateGate
from dominus.providers.rate_limits import RateLimits
from dominus.providers.shared_gate import SharedRateGate, limiter_keys
from tests.support.clock import FakeClock

pytestmark = pytest.mark.backends("sqlite", "postgresql")

KEY = "rdap:rdap.example.test"


class StopOnWait:
    """A stop signal that is set as soon as the gate says a send must wait: the test learns
    that (and until when) without sleeping."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.waits: list[tuple[str, datetime | None]] = []

    def on_wait(self, key: str, until: datetime | None) -> None:
        self.waits.append((key, until))
        if until is not None:
            self.event.set()


def _gate(engine: Engine, clock: FakeClock, setting: str) -> SharedRateGate:
    limits = RateLimits.load(setting)
    # Grants stamped with the fake clock the tests move, on PostgreSQL too (by default they
    # would be stamped with the server's, which no fake clock moves).
    limiters = Limiters.over(engine, clock, server_clock=False)
    return SharedRateGate(limiters, limits, InProcessRateGate(limits), wall=clock)


@pytest.fixture
def other_engine(database_url: str) -> Iterator[Engine]:
    engine = create_database_engine(database_url)
    yield engine
    engine.dispose()


def _sends(gate: SharedRateGate, key: str = KEY) -> tuple[bool, StopOnWait]:
    stop = StopOnWait()
    return gate.acquire(key, stop.event, stop.on_wait), stop


def test_two_processes_share_one_count_per_server(
    engine: Engine, other_engine: Engine, clock: FakeClock
) -> None:
    first = _gate(engine, clock, "rdap.example.test=3/10s")
    second = _gate(other_engine, clock, "rdap.example.test=3/10s")
    assert [_sends(first)[0], _sends(second)[0], _sends(first)[0]] == [True, True, True]
    sent, stop = _sends(second)
    assert not sent
    assert stop.waits[0] == (KEY, clock() + timedelta(seconds=10))
    clock.advance(10)
    assert _sends(second)[0]


def test_a_pause_written_by_one_process_holds_the_other(
    engine: Engine, other_engine: Engine, clock: FakeClock
) -> None:
    first = _gate(engine, clock, "rdap.example.test=100/s")
    second = _gate(other_engine, clock, "rdap.example.test=100/s")
    first.pause(KEY, 60, "HTTP 429 with Retry-After: 60")
    sent, stop = _sends(second)
    assert not sent
    assert stop.waits[0] == (KEY, clock() + timedelta(seconds=60))
    clock.advance(60)
    assert _sends(second)[0]


def test_every_window_of_a_server_holds(engine: Engine, clock: FakeClock) -> None:
    gate = _gate(engine, clock, "rdap.example.test=5/s,rdap.example.test=2/h")
    assert _sends(gate)[0] and _sends(gate)[0]
    sent, stop = _sends(gate)
    assert not sent
    assert stop.waits[0][1] == clock() + timedelta(hours=1)


def test_a_key_a_limiter_cannot_spell_is_still_gated(engine: Engine, clock: FakeClock) -> None:
    key = "rdap:[::1]:8443"
    assert limiter_keys(key, RateLimits.load("*=1/min").windows_for(key))[0][0] == (
        "rdap:_::1_:8443"
    )
    gate = _gate(engine, clock, "*=1/min")
    assert _sends(gate, key)[0]
    assert not _sends(gate, key)[0]


class _BrokenLimiters(Limiters):
    def __init__(self) -> None:
        pass

    def configure(self, key: str, limit: object) -> object:  # type: ignore[override]
        raise DatabaseError("the database is down")


def test_a_database_that_fails_leaves_the_local_gate_in_charge(clock: FakeClock) -> None:
    limits = RateLimits.load("rdap.example.test=1/min")
    gate = SharedRateGate(_BrokenLimiters(), limits, InProcessRateGate(limits), wall=clock)
    assert _sends(gate)[0]
    gate.finished(KEY)
    assert not _sends(gate)[0]  # the local gate's own count holds the second send


def test_a_send_counts_until_a_period_after_its_answer(engine: Engine, clock: FakeClock) -> None:
    gate = _gate(engine, clock, "rdap.example.test=1/10s")
    assert _sends(gate)[0]
    clock.advance(4)
    gate.finished(KEY)  # the answer came 4 s after the grant
    clock.advance(7)
    sent, stop = _sends(gate)
    assert not sent
    assert stop.waits[0][1] == clock() + timedelta(seconds=3)
    clock.advance(3)
    assert _sends(gate)[0]
