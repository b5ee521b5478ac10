"""Following something until it ends, for the commands that wait (`jobs wait`, `run --wait`,
`runs wait`, `portfolio rescore --wait`): read it again now and then, say each change, and give up
after the timeout with one line and exit code 124 (as `timeout(1)` does)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import typer

from dominus.cli.output import errors

T = TypeVar("T")

EXIT_TIMED_OUT = 124
POLL_SECONDS = 0.25


def wait_until(
    read: Callable[[], T],
    finished: Callable[[T], bool],
    *,
    timeout: float | None,
    still: Callable[[T], str],
    line: Callable[[T, float], str] | None = None,
    show: Callable[[str], None] = errors.print,
    changed: Callable[[], bool] | None = None,
    poll_seconds: float = POLL_SECONDS,
    reread_seconds: float = POLL_SECONDS,
    show_last: bool = True,
) -> T:
    """`read()` until `finished` says so; the last reading. Every `poll_seconds` the line
    (`line(reading, seconds waited)`) is shown when it changed; the thing is read again when
    `changed()` says it may have changed, or `reread_seconds` after the last reading. Past the
    timeout: `still(reading)` + "after N s", exit 124. `show_last=False` leaves the final line
    to the caller."""
    started = time.monotonic()
    reading = read()
    last_read = started
    last_line = ""
    while True:
        if line is not None and (show_last or not finished(reading)):
            text = line(reading, time.monotonic() - started)
            if text != last_line:
                show(text)
                last_line = text
        if finished(reading):
            return reading
        if timeout is not None and time.monotonic() - started >= timeout:
            errors.print(f"{still(reading)} after {timeout:g} s")
            raise typer.Exit(EXIT_TIMED_OUT)
        time.sleep(poll_seconds)
        due = time.monotonic() - last_read >= reread_seconds
        if due or (changed is not None and changed()):
            reading = read()
            last_read = time.monotonic()
