"""The start gate: at most its capacity inside, and a thread waiting to enter is let in when
one leaves (the gate wakes waiters only when there are any)."""

from __future__ import annotations

import threading
import time

from dominus.jobs.prefetch import StartGate

# Generous: only a gate that never lets the waiting thread in comes near it.
LIVENESS_SECONDS = 30.0


def test_a_full_gate_refuses_without_waiting_and_admits_after_a_leave() -> None:
    gate = StartGate(1)
    assert gate.try_enter()
    assert not gate.try_enter()
    gate.leave()
    assert gate.try_enter()


def test_a_thread_waiting_at_a_full_gate_enters_when_another_leaves() -> None:
    gate = StartGate(1)
    gate.enter()
    entered = threading.Event()

    def enter_then_say_so() -> None:
        gate.enter()
        entered.set()

    waiting = threading.Thread(target=enter_then_say_so, daemon=True)
    waiting.start()
    # Until the thread waits inside `enter` (bounded: a gate that never counts it fails below).
    give_up = time.monotonic() + LIVENESS_SECONDS
    while gate._waiting == 0 and time.monotonic() < give_up:
        entered.wait(0.001)
    assert not entered.is_set()
    gate.leave()
    assert entered.wait(LIVENESS_SECONDS)
    waiting.join(LIVENESS_SECONDS)
    assert not gate.try_enter()  # the thread that entered holds the one place
