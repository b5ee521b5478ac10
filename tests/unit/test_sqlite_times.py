"""Timestamps as the SQLite backend reads them back: stored as naive UTC text, read as aware
UTC datetimes (the claim reads several per job, so the parse is on the hot path)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dominus.jobs.sql.sqlite_backend import _time, stored_time


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 12, 2, 1, 0, 0, 123456, tzinfo=UTC),
        datetime(2026, 12, 2, 1, 0, 0, tzinfo=UTC),
        datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_a_stored_time_reads_back_as_the_same_utc_moment(moment: datetime) -> None:
    read = _time(stored_time(moment))
    assert read == moment and read is not None and read.tzinfo is UTC


def test_sqlalchemys_text_without_microseconds_reads_as_utc() -> None:
    assert _time("2026-12-02 01:00:00") == datetime(2026, 12, 2, 1, tzinfo=UTC)


def test_a_text_with_an_offset_of_its_own_keeps_its_clock_time_as_before() -> None:
    # Not written by DOMINUS; read as it always was rather than refused.
    assert _time("2026-12-02T01:00:00+02:00") == datetime(2026, 12, 2, 1, tzinfo=UTC)


def test_no_time_is_none() -> None:
    assert _time(None) is None


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(2026, 12, 2, 1, 0, 0, 123456, tzinfo=UTC), "2026-12-02 01:00:00.123456"),
        (datetime(2026, 12, 2, 1, 0, 0, tzinfo=UTC), "2026-12-02 01:00:00.000000"),
        (datetime(1, 1, 1, tzinfo=UTC), "0001-01-01 00:00:00.000000"),
        (datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "9999-12-31 23:59:59.999999"),
        # Not `UTC` itself: converted, as before.
        (
            datetime(2026, 12, 2, 3, 0, 0, 5, tzinfo=timezone(timedelta(hours=2))),
            "2026-12-02 01:00:00.000005",
        ),
        (datetime(2026, 12, 2, 1, 0, tzinfo=timezone(timedelta(0))), "2026-12-02 01:00:00.000000"),
    ],
)
def test_a_time_is_stored_as_naive_utc_text_with_microseconds(moment: datetime, text: str) -> None:
    assert stored_time(moment) == text


def _written_in_full(moment: datetime) -> str:
    # What `stored_time` wrote before it kept the last second's text: the reference.
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


_OFFSETS = st.integers(min_value=-3_000_000, max_value=3_000_000).map(
    lambda micros: timedelta(microseconds=micros)
)


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.lists(_OFFSETS, max_size=6),
)
def test_a_time_near_the_last_one_stored_is_written_as_in_full(
    moment: datetime, offsets: list[timedelta]
) -> None:
    # The kept second must never lend its text to a time of the second before or after it.
    for offset in [timedelta(0), *offsets]:
        assert stored_time(moment + offset) == _written_in_full(moment + offset)


@pytest.mark.parametrize(
    "second",
    [
        datetime(2026, 12, 2, 1, 0, 0, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(2106, 2, 7, 6, 28, 15, tzinfo=UTC),  # the last second the text is kept for
        datetime(2106, 2, 7, 6, 28, 16, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 58, tzinfo=UTC),
    ],
)
def test_the_microseconds_at_either_edge_of_a_second_keep_their_own_second(
    second: datetime,
) -> None:
    edges = [timedelta(microseconds=-1), timedelta(0), timedelta(microseconds=999_999)]
    for first in edges:
        for then in [*edges, timedelta(seconds=1)]:
            stored_time(second + first)
            assert stored_time(second + then) == _written_in_full(second + then)
