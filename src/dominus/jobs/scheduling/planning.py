"""Deciding what to do about a schedule whose cursor is due: a pure function of the timetable,
the cursor (the earliest fire nobody has handled), the time and the catch-up window.

- The latest due fire is enqueued if it is at most `catch_up_window` old (or on time, within
  `on_time`, whatever the window): one job, however many fires were missed before it. Those
  earlier fires are recorded as skipped: the catch-up job stands for them.
- A latest due fire older than the window is not enqueued: every due fire is recorded as skipped.
- Either way the cursor moves to the first fire after `now`.
- A cursor later than the first fire after `now` (ahead of this clock by more than one period)
  was written by a scheduler whose clock is fast: fires are judged by time that has happened, so
  the cursor moves back to the first fire after `now`, firing and skipping nothing. So no plan
  ever writes a cursor later than `now` plus one period, and a scheduler with a fast clock cannot
  silence the others until their clocks catch up with its own.

Counting skipped fires walks the timetable, so it stops at MAX_COUNTED_SKIPS (an every-second
schedule stopped for a week would otherwise walk 600,000 fires); the plan says when it did.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from dominus.jobs.scheduling.timetable import STEP, Timetable

MAX_COUNTED_SKIPS = 100_000


@dataclass(frozen=True, slots=True)
class FirePlan:
    cursor: datetime  # as read; the plan applies only while the row still holds it
    next_fire_at: datetime  # the new cursor
    fire_at: datetime | None  # the fire to enqueue, if any
    catch_up: bool  # fire_at is late (missed, then caught up), not on time
    skipped: int  # due fires not enqueued
    skipped_more: bool  # counting stopped at MAX_COUNTED_SKIPS: at least `skipped`
    first_skipped_at: datetime | None
    last_skipped_at: datetime | None
    # The cursor was ahead of this clock by more than one period and moves back (nothing fires).
    replanned: bool = False


def plan_fires(
    timetable: Timetable,
    cursor: datetime,
    now: datetime,
    *,
    catch_up_window: timedelta,
    on_time: timedelta,
) -> FirePlan | None:
    """What to do now, or None when the cursor is not due yet."""
    next_fire_at = timetable.next_after(now)
    if cursor > next_fire_at:
        return FirePlan(cursor, next_fire_at, None, False, 0, False, None, None, replanned=True)
    if cursor > now:
        return None
    latest = timetable.latest_at_or_before(now)
    if latest is None or latest < cursor:
        # The cursor is not one of this timetable's fires (another scheduler started with
        # another expression) and none has come since: move on without firing.
        return FirePlan(cursor, next_fire_at, None, False, 0, False, None, None)
    lateness = now - latest
    fire_at = latest if lateness <= max(catch_up_window, on_time) else None
    skipped_until = latest if fire_at is not None else latest + STEP  # exclusive end
    skipped = timetable.count_between(cursor, skipped_until, MAX_COUNTED_SKIPS + 1)
    skipped_more = skipped > MAX_COUNTED_SKIPS
    skipped = min(skipped, MAX_COUNTED_SKIPS)
    first_skipped = last_skipped = None
    if skipped:
        first_skipped = timetable.next_after(cursor - STEP)
        last_skipped = latest if fire_at is None else timetable.latest_at_or_before(latest - STEP)
    catch_up = fire_at is not None and (skipped > 0 or lateness > on_time)
    return FirePlan(
        cursor=cursor,
        next_fire_at=next_fire_at,
        fire_at=fire_at,
        catch_up=catch_up,
        skipped=skipped,
        skipped_more=skipped_more,
        first_skipped_at=first_skipped,
        last_skipped_at=last_skipped,
    )
