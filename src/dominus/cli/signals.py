"""SIGTERM and SIGINT for the long-running commands, reacted to off the signal handler.

A Python signal handler runs in the main thread between two bytecodes, possibly while that thread
holds the internal lock of a `threading.Event` (inside `wait` or `clear`). That lock is not
reentrant: a handler that sets the same event, or takes any lock the main thread may hold, waits
for itself forever. A worker hung on SIGTERM exactly so, 48 ms after its last job.

So the handler only writes the signal's number to a pipe, which takes no lock; one daemon thread
per process reads the pipe and runs the command's reaction, where taking locks is safe.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType

# The reaction to the n-th stop signal the process has received (n counts from 1).
StopReaction = Callable[[signal.Signals, int], None]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _SignalRelay:
    """The pipe and the thread that reads it; one per process, made on first use."""

    def __init__(self) -> None:
        self._read_end, self._write_end = os.pipe()
        os.set_blocking(self._write_end, False)
        self._reaction: StopReaction | None = None
        self._received = 0  # read by the relay thread
        self._handled = 0  # counted in the handler, for `interrupt_on_repeat`
        self._interrupt_on_repeat = False
        threading.Thread(target=self._relay, name="dominus-signals", daemon=True).start()

    def react_with(self, reaction: StopReaction, *, interrupt_on_repeat: bool) -> None:
        self._reaction = reaction
        self._received = 0
        self._handled = 0
        self._interrupt_on_repeat = interrupt_on_repeat

    def handle(self, signum: int, _frame: FrameType | None) -> None:
        self._handled += 1
        if self._interrupt_on_repeat and self._handled > 1:
            raise KeyboardInterrupt  # takes no lock; unwinds the main thread's `finally` blocks
        # BlockingIOError: the pipe is full of signals not yet read; one more adds nothing.
        with contextlib.suppress(BlockingIOError):
            os.write(self._write_end, bytes([signum]))

    def _relay(self) -> None:
        while True:
            for signum in os.read(self._read_end, 64):
                self._received += 1
                reaction = self._reaction
                if reaction is not None:
                    reaction(signal.Signals(signum), self._received)


class OffHandlerCall:
    """`call()` from a signal handler runs `reaction` on a thread of its own, taking no lock in
    the handler: for handlers installed by others (uvicorn's), which must do more than set a
    flag. The thread starts here, outside any handler."""

    def __init__(self, reaction: Callable[[], None], name: str) -> None:
        self._read_end, self._write_end = os.pipe()
        os.set_blocking(self._write_end, False)
        self._reaction = reaction
        threading.Thread(target=self._relay, name=name, daemon=True).start()

    def call(self) -> None:
        with contextlib.suppress(BlockingIOError):  # a full pipe already holds a call
            os.write(self._write_end, b"\0")

    def _relay(self) -> None:
        while True:
            for _ in os.read(self._read_end, 64):
                self._reaction()


@functools.cache
def _relay() -> _SignalRelay:
    return _SignalRelay()


def on_stop_signals(reaction: StopReaction, *, interrupt_on_repeat: bool = False) -> None:
    """Call `reaction(signal, n)` on a thread of its own for each SIGTERM or SIGINT, n counting
    from 1 since this call. With `interrupt_on_repeat`, a second signal raises KeyboardInterrupt
    in the main thread instead. Call from the main thread (as `signal.signal` must be); a later
    call replaces the reaction."""
    relay = _relay()
    relay.react_with(reaction, interrupt_on_repeat=interrupt_on_repeat)
    for stop_signal in STOP_SIGNALS:
        signal.signal(stop_signal, relay.handle)
