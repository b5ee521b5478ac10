"""Wrong tokens counted per client address: free tries, then a doubling wait capped at a
minute, a window that forgets, the right token clearing the count, IPv6 per /64, bounded
memory; on a clock the test moves by hand."""

from __future__ import annotations

import logging

import pytest

from dominus.api.token_throttle import MAX_DELAY_SECONDS, WINDOW_SECONDS, TokenThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def fail(throttle: TokenThrottle, address: str, times: int) -> None:
    for _ in range(times):
        throttle.failed(address, "/api/v1/jobs")


def test_five_free_failures_then_a_doubling_wait_up_to_a_minute(clock: Clock) -> None:
    throttle = TokenThrottle(clock=clock)
    fail(throttle, "192.0.2.1", 4)
    assert throttle.retry_after("192.0.2.1") is None
    waits = []
    for _ in range(10):
        fail(throttle, "192.0.2.1", 1)
        wait = throttle.retry_after("192.0.2.1")
        assert wait is not None
        waits.append(wait)
        clock.now += wait  # waited as told: may try again
        assert throttle.retry_after("192.0.2.1") is None
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]
    assert max(waits) == MAX_DELAY_SECONDS
    assert throttle.retry_after("192.0.2.2") is None  # another address is not held back


def test_the_wait_is_whole_seconds_still_left(clock: Clock) -> None:
    throttle = TokenThrottle(clock=clock)
    fail(throttle, "192.0.2.1", 7)  # a 4 s wait
    clock.now += 2.5
    assert throttle.retry_after("192.0.2.1") == 2


def test_the_right_token_and_a_quiet_window_start_the_count_again(clock: Clock) -> None:
    throttle = TokenThrottle(clock=clock)
    fail(throttle, "192.0.2.1", 4)
    throttle.succeeded("192.0.2.1")
    fail(throttle, "192.0.2.1", 4)
    assert throttle.retry_after("192.0.2.1") is None
    clock.now += WINDOW_SECONDS + 1
    fail(throttle, "192.0.2.1", 4)
    assert throttle.retry_after("192.0.2.1") is None
    fail(throttle, "192.0.2.1", 1)
    assert throttle.retry_after("192.0.2.1") == 1


def test_ipv6_addresses_count_per_64_and_mapped_ipv4_as_ipv4(clock: Clock) -> None:
    throttle = TokenThrottle(clock=clock)
    for host in range(1, 6):
        throttle.failed(f"2001:db8:1:2::{host:x}", "/login")
    assert throttle.retry_after("2001:db8:1:2:ffff::1") == 1
    assert throttle.retry_after("2001:db8:1:3::1") is None
    fail(throttle, "::ffff:192.0.2.9", 5)
    assert throttle.retry_after("192.0.2.9") == 1


def test_memory_is_bounded_and_the_oldest_address_goes_first(clock: Clock) -> None:
    throttle = TokenThrottle(clock=clock, max_tracked=3)
    fail(throttle, "192.0.2.1", 5)
    for host in (2, 3, 4):
        clock.now += 0.1
        throttle.failed(f"192.0.2.{host}", "/login")
    assert throttle.tracked == 3
    assert throttle.retry_after("192.0.2.1") is None  # forgotten, the least recent
    # A failure refreshes an address: it is not the next one forgotten.
    fail(throttle, "192.0.2.2", 4)
    throttle.failed("192.0.2.5", "/login")
    assert throttle.retry_after("192.0.2.2") == 1


def test_each_failure_is_logged_with_the_address_and_never_a_token(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    throttle = TokenThrottle(clock=clock)
    with caplog.at_level(logging.WARNING, logger="dominus.api"):
        fail(throttle, "192.0.2.1", 5)
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 5
    assert all(
        line.startswith("wrong API token from 192.0.2.1 on '/api/v1/jobs'") for line in lines
    )
    assert lines[0].endswith("(1 in a row)")
    assert lines[-1].endswith("(5 in a row); its next try must wait 1 s")
    assert all(record.levelno == logging.WARNING for record in caplog.records)
