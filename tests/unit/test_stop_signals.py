"""The CLI's reaction to SIGTERM/SIGINT runs off the signal handler (cli/signals.py).

The worker once hung on SIGTERM: its handler set a `threading.Event` whose internal lock the main
thread held at that instant (inside `Event.wait`/`clear`), and that lock is not reentrant. These
tests deliver real signals to this process while the main thread holds such a lock."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from dominus.cli.signals import STOP_SIGNALS, OffHandlerCall, on_stop_signals


@pytest.fixture(autouse=True)
def _restore_handlers() -> Iterator[None]:
    saved = {stop_signal: signal.getsignal(stop_signal) for stop_signal in STOP_SIGNALS}
    yield
    for stop_signal, handler in saved.items():
        signal.signal(stop_signal, handler)


def _signal_while_holding(event: threading.Event, stop_signal: signal.Signals) -> None:
    """Deliver `stop_signal` to this process while the main thread holds `event`'s lock, as it
    does for an instant inside every `wait` and `clear`."""
    with event._cond:  # type: ignore[attr-defined]  # the very lock the hang was about
        os.kill(os.getpid(), stop_signal)
        # The handler runs here, between two bytecodes, with the lock held.
        for _ in range(1000):
            pass


def test_a_signal_arriving_while_the_main_thread_holds_the_events_lock_still_sets_it() -> None:
    stopped = threading.Event()
    on_stop_signals(lambda _received, _count: stopped.set())

    _signal_while_holding(stopped, signal.SIGTERM)

    assert stopped.wait(5.0), "the reaction never ran"


def test_the_reaction_hears_which_signal_and_how_many_so_far() -> None:
    heard: list[tuple[signal.Signals, int]] = []
    both = threading.Event()

    def react(received: signal.Signals, count: int) -> None:
        heard.append((received, count))
        if count == 2:
            both.set()

    on_stop_signals(react)
    os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGINT)

    assert both.wait(5.0)
    assert heard == [(signal.SIGTERM, 1), (signal.SIGINT, 2)]


def test_a_later_call_replaces_the_reaction_and_starts_counting_again() -> None:
    first: list[int] = []
    second: list[int] = []
    heard = threading.Event()
    on_stop_signals(lambda _received, count: first.append(count))

    def count_and_tell(_received: signal.Signals, count: int) -> None:
        second.append(count)
        heard.set()

    on_stop_signals(count_and_tell)

    os.kill(os.getpid(), signal.SIGTERM)

    assert heard.wait(5.0)
    assert (first, second) == ([], [1])


def test_with_interrupt_on_repeat_the_second_signal_interrupts_the_main_thread() -> None:
    first = threading.Event()
    on_stop_signals(lambda _received, _count: first.set(), interrupt_on_repeat=True)

    os.kill(os.getpid(), signal.SIGINT)
    assert first.wait(5.0)
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass


def test_a_handler_installed_by_others_hands_its_work_off_without_taking_a_lock() -> None:
    """`dominus serve` reacts inside uvicorn's handler: it hands the stop to a thread."""
    stopped = threading.Event()
    relay = OffHandlerCall(stopped.set, "test-exit")

    def uvicorns_handler(_signum: int, _frame: object) -> None:
        relay.call()

    signal.signal(signal.SIGTERM, uvicorns_handler)
    _signal_while_holding(stopped, signal.SIGTERM)

    assert stopped.wait(5.0), "the reaction never ran"
