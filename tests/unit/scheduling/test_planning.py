"""What a scheduler does about a due schedule: fire on time, one catch-up for missed fires within
the window, skipped fires recorded beyond it. Pure: the time is an argument."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dominus.errors import InvalidScheduleError
from dominus.jobs.scheduling import planning
from dominus.jobs.scheduling.planning import FirePlan, plan_fires
from dominus.jobs.scheduling.timetable import Timetable

HOUR = timedelta(hours=1)
ON_TIME = timedelta(seconds=5)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[arg-type, misc]


def plan(cron: str, cursor: datetime, now: datetime, window: timedelta = HOUR) -> FirePlan | None:
    return plan_fires(Timetable(cron), cursor, now, catch_up_window=window, on_time=ON_TIME)


def test_nothing_is_due_before_the_cursor() -> None:
    assert plan("0 4 * * *", utc(2030, 1, 1, 4), utc(2030, 1, 1, 3, 59, 59)) is None


def test_a_fire_on_time() -> None:
    fire = utc(2030, 1, 1, 4)
    result = plan("0 4 * * *", fire, fire + timedelta(milliseconds=200))
    assert result == FirePlan(
        cursor=fire,
        next_fire_at=utc(2030, 1, 2, 4),
        fire_at=fire,
        catch_up=False,
        skipped=0,
        skipped_more=False,
        first_skipped_at=None,
        last_skipped_at=None,
    )


def test_missed_fires_within_the_window_make_one_catch_up() -> None:
    result = plan("*/10 * * * *", utc(2030, 1, 1, 12), utc(2030, 1, 1, 12, 35))
    assert result is not None
    assert result.fire_at == utc(2030, 1, 1, 12, 30)
    assert result.catch_up
    assert result.skipped == 3  # 12:00, 12:10, 12:20: the catch-up stands for them
    assert (result.first_skipped_at, result.last_skipped_at) == (
        utc(2030, 1, 1, 12),
        utc(2030, 1, 1, 12, 20),
    )
    assert result.next_fire_at == utc(2030, 1, 1, 12, 40)


def test_one_missed_fire_within_the_window_is_caught_up_alone() -> None:
    result = plan("0 4 * * *", utc(2030, 1, 1, 4), utc(2030, 1, 1, 4, 30))
    assert result is not None
    assert (result.fire_at, result.catch_up, result.skipped) == (utc(2030, 1, 1, 4), True, 0)


def test_a_fire_missed_beyond_the_window_is_skipped() -> None:
    result = plan("0 4 * * *", utc(2030, 1, 1, 4), utc(2030, 1, 1, 6))
    assert result is not None
    assert result.fire_at is None
    assert not result.catch_up
    assert result.skipped == 1
    assert result.first_skipped_at == result.last_skipped_at == utc(2030, 1, 1, 4)
    assert result.next_fire_at == utc(2030, 1, 2, 4)


def test_days_of_downtime_skip_every_fire() -> None:
    result = plan("0 * * * *", utc(2030, 1, 1, 0), utc(2030, 1, 3, 0, 30), window=timedelta(0))
    assert result is not None
    assert result.fire_at is None
    assert result.skipped == 49  # 1 January 00:00 to 3 January 00:00
    assert result.last_skipped_at == utc(2030, 1, 3)


def test_a_zero_window_still_fires_on_time() -> None:
    fire = utc(2030, 1, 1, 4)
    on_time = plan("0 4 * * *", fire, fire + timedelta(seconds=1), window=timedelta(0))
    late = plan("0 4 * * *", fire, fire + timedelta(seconds=6), window=timedelta(0))
    assert on_time is not None and on_time.fire_at == fire
    assert late is not None and late.fire_at is None and late.skipped == 1


def test_a_cursor_that_is_not_a_fire_moves_on_without_firing() -> None:
    # Another scheduler left a cursor of its own expression (05:00); this one fires at 04:00.
    result = plan("0 4 * * *", utc(2030, 1, 1, 5), utc(2030, 1, 1, 5, 0, 1))
    assert result is not None
    assert result.fire_at is None and result.skipped == 0
    assert result.next_fire_at == utc(2030, 1, 2, 4)


def test_counting_skipped_fires_stops_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planning, "MAX_COUNTED_SKIPS", 50)
    result = plan("* * * * * *", utc(2030, 1, 1), utc(2030, 1, 2), window=timedelta(0))
    assert result is not None
    assert (result.skipped, result.skipped_more) == (50, True)
    assert result.fire_at == utc(2030, 1, 2)  # on time, and the catch-up of all the others
    assert result.last_skipped_at == utc(2030, 1, 1, 23, 59, 59)


def test_a_cursor_ahead_by_more_than_one_period_moves_back_without_firing() -> None:
    # A scheduler whose clock ran two hours fast fired "14:00" and left the cursor at 15:00;
    # on this clock it is 12:30, so the next fire that has not happened is 13:00.
    result = plan("0 * * * *", utc(2030, 1, 1, 15), utc(2030, 1, 1, 12, 30))
    assert result == FirePlan(
        cursor=utc(2030, 1, 1, 15),
        next_fire_at=utc(2030, 1, 1, 13),
        fire_at=None,
        catch_up=False,
        skipped=0,
        skipped_more=False,
        first_skipped_at=None,
        last_skipped_at=None,
        replanned=True,
    )


def test_a_cursor_at_the_next_fire_is_simply_not_due() -> None:
    assert plan("0 * * * *", utc(2030, 1, 1, 13), utc(2030, 1, 1, 12, 30)) is None
    # At a fire time itself the next fire is the one after it: that cursor is not ahead either.
    assert plan("0 * * * *", utc(2030, 1, 1, 13), utc(2030, 1, 1, 12)) is None


def test_a_far_future_cursor_of_a_daily_schedule_moves_back_to_tomorrow() -> None:
    result = plan("0 4 * * *", utc(2031, 6, 1, 4), utc(2030, 1, 1, 5))
    assert result is not None and result.replanned
    assert (result.next_fire_at, result.fire_at, result.skipped) == (utc(2030, 1, 2, 4), None, 0)


def _cron_field(low: int, high: int) -> st.SearchStrategy[str]:
    number = st.integers(low, high)
    return st.one_of(
        st.just("*"),
        number.map(str),
        st.integers(2, max(2, (high - low) // 2)).map(lambda step: f"*/{step}"),
        st.tuples(number, number).map(lambda pair: f"{min(pair)}-{max(pair)}"),
        st.tuples(number, number).map(lambda pair: f"{pair[0]},{pair[1]}"),
    )


CRON_EXPRESSIONS = st.one_of(
    st.sampled_from(["@hourly", "@daily", "@weekly", "@monthly", "@yearly"]),
    st.tuples(
        _cron_field(0, 59),
        _cron_field(0, 23),
        _cron_field(1, 28),
        _cron_field(1, 12),
        _cron_field(0, 6),
        st.one_of(st.just(""), _cron_field(0, 59)),
    ).map(lambda fields: " ".join(fields).strip()),
)
ZONES = st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"])
INSTANTS = st.datetimes(datetime(2001, 1, 1), datetime(2099, 1, 1), timezones=st.just(UTC))
# Where the cursor is, relative to now: in the past (missed fires), or ahead (a fast clock).
CURSOR_OFFSETS = st.timedeltas(-timedelta(hours=6), timedelta(days=800))


@given(CRON_EXPRESSIONS, ZONES, INSTANTS, CURSOR_OFFSETS, st.booleans())
def test_no_plan_leaves_the_cursor_after_the_next_fire_after_now(
    expression: str, zone: str, now: datetime, offset: timedelta, on_a_fire: bool
) -> None:
    try:
        timetable = Timetable(expression, zone)
    except InvalidScheduleError:
        return  # a combination naming no date (31 April, say): refused, as it should be
    cursor = timetable.next_after(now + offset) if on_a_fire else now + offset
    result = plan_fires(timetable, cursor, now, catch_up_window=HOUR, on_time=ON_TIME)
    written = cursor if result is None else result.next_fire_at
    assert written <= timetable.next_after(now)  # never past now plus one period
    if result is not None and result.fire_at is not None:
        assert result.fire_at <= now  # fires are judged by time that has happened
