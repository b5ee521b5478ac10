"""The worker's maintenance thread: when its duties first run, and stopping one never started."""

from __future__ import annotations

import threading

from dominus.jobs.maintenance import MaintenanceThread, PeriodicDuty

WAIT = 10.0  # a generous bound on a thread's first turn; never reached when it works


def test_a_duty_with_a_first_delay_waits_while_one_without_runs_at_once() -> None:
    prompt_ran = threading.Event()
    delayed_runs: list[int] = []
    thread = MaintenanceThread(
        [
            PeriodicDuty("delayed", 60.0, lambda: delayed_runs.append(1), first_after_seconds=60),
            PeriodicDuty("prompt", 60.0, prompt_ran.set),
        ]
    )
    thread.start()
    try:
        assert prompt_ran.wait(WAIT)
    finally:
        thread.stop()
    assert delayed_runs == []


def test_a_thread_never_started_stops_without_complaint() -> None:
    thread = MaintenanceThread([PeriodicDuty("never", 1.0, lambda: None)])
    assert not thread.started
    thread.stop()
    assert not thread.started
