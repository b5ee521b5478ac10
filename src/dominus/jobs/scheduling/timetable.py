"""When a schedule fires: a cron expression read in a time zone, as a series of UTC instants.

The expression is parsed by croniter: five fields (minute hour day month weekday), or six with
seconds as the sixth (croniter's order: `* * * * * */10` is every ten seconds), or an alias
(`@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`). Hashed (`H`) fields are refused: their
meaning depends on a seed that every scheduler would have to share.

croniter walks wall-clock times without a zone; this module maps each wall-clock time to the
instant it names in the schedule's zone, and that is where daylight-saving time is decided:

- A wall-clock time that does not exist (the hour skipped when clocks go forward) fires once, at
  the first instant after the gap (02:30 on a spring-forward night in Europe/Berlin fires at
  03:00 CEST). Several skipped wall-clock times map to that one instant and fire once.
- A wall-clock time that happens twice (the hour repeated when clocks go back) fires once, at its
  first occurrence; the repeat fires nothing.

The mapping keeps the order of wall-clock times, so the fires form one increasing series of
instants and `next_after` / `latest_at_or_before` need nothing but croniter's forward walk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, CroniterError, croniter

from dominus.errors import InvalidScheduleError

MAX_EXPRESSION_LENGTH = 200
ALIASES = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
FIELD_COUNTS = (5, 6)
# How far back `latest_at_or_before` looks: further than any expression's longest gap between
# two fires (29 February of a leap year every 4, or 8, years).
LOOK_BACK = timedelta(days=366 * 9)
# The smallest step between two instants: `fire - STEP` is "just before that fire".
STEP = timedelta.resolution
_HASHED = re.compile(r"H(\(.*\))?(/\d+)?")


def time_zone(name: str) -> ZoneInfo:
    """The IANA time zone `name`; InvalidScheduleError if there is none."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidScheduleError(
            f"unknown time zone {name!r} (an IANA name such as UTC or Europe/Berlin)"
        ) from None


class Timetable:
    """A cron expression in a time zone. Immutable; cheap to keep, one per schedule."""

    def __init__(self, expression: str, zone: str = "UTC") -> None:
        normalised = " ".join(expression.split())
        self.expression = normalised.lower() if normalised.startswith("@") else normalised
        self.zone_name = zone
        self.zone = time_zone(zone)
        _check_expression(self.expression)
        # An expression that is well formed but names no date (30 February) is refused now, not
        # discovered at its first fire.
        self.next_after(datetime(2000, 1, 1, tzinfo=UTC))

    def __repr__(self) -> str:
        return f"Timetable({self.expression!r}, {self.zone_name!r})"

    def fires_after(self, instant: datetime) -> Iterator[datetime]:
        """Every fire strictly after `instant` (timezone-aware), as increasing UTC instants."""
        local = instant.astimezone(self.zone)
        walk = croniter(self.expression, local.replace(tzinfo=None))
        last: datetime | None = None
        while True:
            try:
                wall = walk.get_next(datetime)
            except CroniterBadDateError:
                raise InvalidScheduleError(
                    f"cron expression {self.expression!r} never fires (no date matches it)"
                ) from None
            fire = self._instant(wall)
            # Wall-clock times of a repeated hour map to their first pass, which can lie before
            # `instant`; several skipped wall-clock times map to one instant.
            if fire > instant and fire != last:
                last = fire
                yield fire

    def next_after(self, instant: datetime) -> datetime:
        """The first fire strictly after `instant`."""
        return next(self.fires_after(instant))

    def latest_at_or_before(self, instant: datetime) -> datetime | None:
        """The last fire at or before `instant` (None if none within LOOK_BACK).

        Looks back in doubling steps for a window (instant - back, instant] holding a fire, then
        walks forward through it: only forward walks, so the DST rules are the ones above."""
        back = timedelta(seconds=1)
        while back <= LOOK_BACK * 2:
            first = self.next_after(instant - back)
            if first <= instant:
                latest = first
                for fire in self.fires_after(first):
                    if fire > instant:
                        return latest
                    latest = fire
            back *= 2
        return None

    def count_between(self, start: datetime, end: datetime, limit: int) -> int:
        """How many fires lie in [start, end), counting at most `limit`."""
        count = 0
        for fire in self.fires_after(start - STEP):
            if fire >= end or count >= limit:
                break
            count += 1
        return count

    def _instant(self, wall: datetime) -> datetime:
        first = wall.replace(tzinfo=self.zone, fold=0).astimezone(UTC)
        second = wall.replace(tzinfo=self.zone, fold=1).astimezone(UTC)
        if first <= second:
            return first  # an ordinary time, or the first pass of a repeated one
        # In a gap, fold=0 reads the time with the offset before the jump and lands after it,
        # fold=1 with the offset after it and lands before it: the jump lies between the two.
        return self._end_of_gap(second, first)

    def _end_of_gap(self, before: datetime, after: datetime) -> datetime:
        """The instant the clocks jumped forward, in (before, after]: the first instant whose
        offset is the one after the jump. Transitions fall on whole seconds."""
        offset_after = self._offset(after)
        low, high = int(before.timestamp()), int(after.timestamp())
        while high - low > 1:
            middle = (low + high) // 2
            if self._offset(datetime.fromtimestamp(middle, UTC)) == offset_after:
                high = middle
            else:
                low = middle
        return datetime.fromtimestamp(high, UTC)

    def _offset(self, instant: datetime) -> timedelta | None:
        return instant.astimezone(self.zone).utcoffset()


def _check_expression(expression: str) -> None:
    if not expression:
        raise InvalidScheduleError("the cron expression is empty")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise InvalidScheduleError(
            f"the cron expression is longer than {MAX_EXPRESSION_LENGTH} characters"
        )
    if expression.startswith("@"):
        if expression.lower() not in ALIASES:
            raise InvalidScheduleError(
                f"unknown cron alias {expression!r} (known: {', '.join(ALIASES)})"
            )
    elif (count := len(expression.split())) not in FIELD_COUNTS:
        raise InvalidScheduleError(
            f"cron expression {expression!r} has {count} field{'' if count == 1 else 's'}; "
            "give 5 (minute hour day month weekday) or 6 (the same and seconds)"
        )
    if any(_HASHED.fullmatch(field) for field in expression.split()):
        raise InvalidScheduleError(
            f"cron expression {expression!r}: hashed (H) fields are not supported"
        )
    try:
        croniter(expression, datetime(2000, 1, 1))
    except (CroniterError, ValueError, TypeError, KeyError) as error:
        # croniter starts its messages with the expression in brackets; it is named here already.
        reason = re.sub(r"^\[.*?\]\s*", "", str(error))
        raise InvalidScheduleError(f"invalid cron expression {expression!r}: {reason}") from None
