"""Counting grants by the windows of a rate limit's period."""

from __future__ import annotations

from datetime import datetime, timedelta


def most_in_a_window(stamps: list[datetime], period: timedelta) -> int:
    """The most `stamps` in any half-open window [x, x + period)."""
    ordered = sorted(stamps)
    most, first = 0, 0
    for last, stamp in enumerate(ordered):
        while stamp - ordered[first] >= period:
            first += 1
        most = max(most, last - first + 1)
    return most
