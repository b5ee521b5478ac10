"""Small helpers shared by the suites: waiting for a condition, picking a free port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Literal, TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T | Literal[False] | None],
    timeout: float = 15,
    message: str = "the condition",
    *,
    interval: float = 0.05,
) -> T:
    """Poll `condition` until it returns something truthy (returned), or fail after `timeout`
    seconds with an AssertionError naming `message`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {message}")
        time.sleep(interval)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def outcome_within(work: Callable[[], T], timeout: float = 30) -> T | BaseException:
    """Run `work` on a thread: what it returned or raised, or an AssertionError here when it is
    still running after `timeout` seconds (a bound on a hang, not a timing check)."""
    outcome: list[T | BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as error:  # handed to the caller to look at
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f"still running after {timeout} s")
    return outcome[0]
