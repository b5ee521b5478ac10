"""The tests' fixed start time and a clock they move by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

T0 = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC)


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now
