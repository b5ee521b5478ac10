"""Next-fire computation: cron expressions in a time zone, across daylight-saving changes, and the
expressions and zones that are refused. Every time is given, never read from a clock.

Europe/Berlin in 2030: clocks go forward on 31 March at 02:00 CET (01:00 UTC) to 03:00 CEST, and
back on 27 October at 03:00 CEST (01:00 UTC) to 02:00 CET."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dominus.errors import ConfigurationError, InvalidScheduleError
from dominus.jobs.scheduling.timetable import Timetable


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[arg-type, misc]


def fires(timetable: Timetable, after: datetime, count: int) -> list[datetime]:
    found = []
    for fire in timetable.fires_after(after):
        found.append(fire)
        if len(found) == count:
            return found
    raise AssertionError("unreachable")


def test_a_daily_time_in_utc() -> None:
    daily = Timetable("0 4 * * *")
    assert daily.next_after(utc(2030, 1, 1, 3, 59, 59)) == utc(2030, 1, 1, 4)
    # Strictly after: a fire time itself gives the next one.
    assert daily.next_after(utc(2030, 1, 1, 4)) == utc(2030, 1, 2, 4)
    assert daily.next_after(utc(2030, 1, 1, 4, 0, 0) + timedelta(microseconds=1)) == utc(
        2030, 1, 2, 4
    )


def test_the_default_schedules_of_the_issue() -> None:
    monday = utc(2030, 1, 7)  # a Monday
    assert Timetable("0 5 * * 0").next_after(monday) == utc(2030, 1, 13, 5)  # Sunday
    assert Timetable("0 */6 * * *").next_after(monday) == utc(2030, 1, 7, 6)
    assert Timetable("0 9 * * 1").next_after(monday) == utc(2030, 1, 7, 9)
    assert Timetable("0 6 1 * *").next_after(monday) == utc(2030, 2, 1, 6)


def test_a_local_time_follows_the_zone_offset() -> None:
    berlin = Timetable("0 4 * * *", "Europe/Berlin")
    assert berlin.next_after(utc(2030, 1, 1)) == utc(2030, 1, 1, 3)  # CET, UTC+1
    assert berlin.next_after(utc(2030, 7, 1)) == utc(2030, 7, 1, 2)  # CEST, UTC+2


def test_six_fields_fire_every_second() -> None:
    every_second = Timetable("* * * * * *")
    start = utc(2030, 1, 1, 12, 0, 0)
    assert fires(every_second, start, 3) == [start + timedelta(seconds=n) for n in (1, 2, 3)]
    ten = Timetable("* * * * * */10")
    assert fires(ten, start, 2) == [start + timedelta(seconds=10), start + timedelta(seconds=20)]


def test_a_wall_clock_time_in_the_spring_gap_fires_once_when_the_gap_ends() -> None:
    berlin = Timetable("30 2 * * *", "Europe/Berlin")
    assert fires(berlin, utc(2030, 3, 30), 3) == [
        utc(2030, 3, 30, 1, 30),  # 02:30 CET
        utc(2030, 3, 31, 1, 0),  # 02:30 does not exist: 03:00 CEST, the first instant after
        utc(2030, 4, 1, 0, 30),  # 02:30 CEST
    ]


def test_every_time_skipped_by_the_gap_becomes_one_fire() -> None:
    quarter = Timetable("*/15 * * * *", "Europe/Berlin")
    assert fires(quarter, utc(2030, 3, 31, 0, 30), 4) == [
        utc(2030, 3, 31, 0, 45),  # 01:45 CET
        utc(2030, 3, 31, 1, 0),  # 02:00, 02:15, 02:30, 02:45 and 03:00 CEST: one fire
        utc(2030, 3, 31, 1, 15),  # 03:15 CEST
        utc(2030, 3, 31, 1, 30),
    ]


def test_a_gap_of_half_an_hour_ends_at_the_right_instant() -> None:
    # Lord Howe Island moves from UTC+10:30 to UTC+11 at 02:00 local on 6 October 2030.
    lord_howe = Timetable("15 2 * * *", "Australia/Lord_Howe")
    gap_day = lord_howe.next_after(utc(2030, 10, 5, 12))
    assert gap_day == utc(2030, 10, 5, 15, 30)  # 02:30 +11, when the gap ends
    assert gap_day.astimezone(lord_howe.zone).strftime("%H:%M %z") == "02:30 +1100"


def test_a_repeated_wall_clock_time_fires_once_on_its_first_pass() -> None:
    berlin = Timetable("30 2 * * *", "Europe/Berlin")
    assert fires(berlin, utc(2030, 10, 26), 3) == [
        utc(2030, 10, 26, 0, 30),  # 02:30 CEST
        utc(2030, 10, 27, 0, 30),  # 02:30 CEST, first pass; not again at 02:30 CET (01:30 UTC)
        utc(2030, 10, 28, 1, 30),  # 02:30 CET
    ]


def test_the_repeated_hour_fires_nothing_on_its_second_pass() -> None:
    half_hour = Timetable("*/30 * * * *", "Europe/Berlin")
    assert fires(half_hour, utc(2030, 10, 26, 23, 0), 5) == [
        utc(2030, 10, 26, 23, 30),  # 01:30 CEST
        utc(2030, 10, 27, 0, 0),  # 02:00 CEST
        utc(2030, 10, 27, 0, 30),  # 02:30 CEST
        utc(2030, 10, 27, 2, 0),  # 03:00 CET: 02:00 and 02:30 CET were fired on the first pass
        utc(2030, 10, 27, 2, 30),
    ]


def test_next_fire_from_inside_the_second_pass() -> None:
    half_hour = Timetable("*/30 * * * *", "Europe/Berlin")
    inside = utc(2030, 10, 27, 1, 10)  # 02:10 CET, the second pass
    assert half_hour.next_after(inside) == utc(2030, 10, 27, 2, 0)


def test_latest_fire_at_or_before() -> None:
    daily = Timetable("0 4 * * *")
    assert daily.latest_at_or_before(utc(2030, 1, 2, 4)) == utc(2030, 1, 2, 4)
    assert daily.latest_at_or_before(utc(2030, 1, 2, 3, 59)) == utc(2030, 1, 1, 4)
    leap = Timetable("0 0 29 2 *")
    assert leap.latest_at_or_before(utc(2031, 6, 1)) == utc(2028, 2, 29)
    half_hour = Timetable("*/30 * * * *", "Europe/Berlin")
    # At 02:50 CET (second pass) the latest fire is 02:30 CEST, an hour and twenty minutes ago.
    assert half_hour.latest_at_or_before(utc(2030, 10, 27, 1, 50)) == utc(2030, 10, 27, 0, 30)
    spring = Timetable("30 2 * * *", "Europe/Berlin")
    assert spring.latest_at_or_before(utc(2030, 3, 31, 1, 0)) == utc(2030, 3, 31, 1, 0)


def test_counting_fires_in_a_range() -> None:
    ten = Timetable("*/10 * * * *")
    start = utc(2030, 1, 1, 12)
    assert ten.count_between(start, start + timedelta(hours=1), limit=100) == 6
    assert ten.count_between(start, start + timedelta(hours=1), limit=4) == 4
    assert ten.count_between(start, start, limit=100) == 0


def test_aliases_and_names() -> None:
    assert Timetable("@daily").next_after(utc(2030, 1, 1, 1)) == utc(2030, 1, 2)
    assert Timetable("@HOURLY").expression == "@hourly"
    assert Timetable("0 9 * * mon").next_after(utc(2030, 1, 1)) == utc(2030, 1, 7, 9)
    assert Timetable("  0   4 * *  * ").expression == "0 4 * * *"


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("61 * * * *", "out of range"),
        ("0 25 * * *", "out of range"),
        ("a b c", "has 3 fields"),
        ("* * * * * * *", "has 7 fields"),
        ("", "empty"),
        ("0 0 31 2 *", "never fires"),
        ("*/0 * * * *", "step '0'"),
        ("H * * * *", "hashed (H) fields are not supported"),
        ("@reboot", "unknown cron alias"),
        ("1-2-3 * * * *", "invalid cron expression"),
        ("0 4 * * * 60", "out of range"),
        ("0 " * 120, "longer than 200"),
    ],
)
def test_invalid_expressions_are_refused_with_the_reason(expression: str, reason: str) -> None:
    with pytest.raises(InvalidScheduleError) as raised:
        Timetable(expression)
    assert reason in raised.value.message
    assert isinstance(raised.value, ConfigurationError)  # exit 2 at every edge


@pytest.mark.parametrize("zone", ["Mars/Base", "utc", "", "../etc/passwd", "/etc/localtime"])
def test_unknown_time_zones_are_refused(zone: str) -> None:
    with pytest.raises(InvalidScheduleError, match="unknown time zone"):
        Timetable("0 4 * * *", zone)
