"""When a worker's database duties fall due: registering itself, heartbeating its claims,
checking for cancel requests, and claiming (at the regular poll, when a retry it scheduled
becomes due, when asked to by a local enqueue or the change watcher, when a job it was notified
of becomes due by its clock, or at once after a full claim).

The schedule only keeps time; the worker's loop performs the duties. `request_poll` and
`request_cancel_check` may be called from any thread; the rest from the loop thread.
"""

from __future__ import annotations

import heapq
import threading
from datetime import UTC, datetime, timedelta

_EPOCH = datetime.min.replace(tzinfo=UTC)
# How many due times of notified jobs a worker remembers at most: one that cannot claim for long
# (every slot busy) while notifications keep coming must not grow without bound. Past it, the
# job is found by the next claim, or at the latest by the next poll.
MAX_NOTIFIED_DUE_TIMES = 1_000


class DutySchedule:
    def __init__(
        self, *, poll_seconds: float, heartbeat_seconds: float, cancel_check_seconds: float
    ) -> None:
        self._poll = timedelta(seconds=poll_seconds)
        self._heartbeat = timedelta(seconds=heartbeat_seconds)
        self._cancel_check = timedelta(seconds=cancel_check_seconds)
        self.registered = False
        self._next_heartbeat_at = _EPOCH
        self._next_cancel_check_at = _EPOCH
        self._cancel_check_requested = False
        self._next_poll_at = _EPOCH
        # Claim at the next tick whatever the poll says: at start, after a full claim (more may
        # be waiting), after a reclaim or a change the watcher saw.
        self._claim_wanted = True
        self._poll_requested_at: datetime | None = None
        self._poll_request_lock = threading.Lock()
        # When retries this worker scheduled become due (a min-heap): it looks again then.
        self._retries_due: list[datetime] = []
        # When jobs it was notified of become due by its clock (a min-heap, ADR 0062).
        self._notified_due: list[datetime] = []
        self._retry_horizon: datetime | None = None
        self._last_claim_at: datetime | None = None
        self._last_claim_was_full = True

    # --- heartbeats and cancel checks ------------------------------------------------------
    def heartbeat_due(self, now: datetime) -> bool:
        return now >= self._next_heartbeat_at

    def heartbeat_done(self, now: datetime) -> None:
        self._next_heartbeat_at = now + self._heartbeat

    def request_cancel_check(self) -> None:
        """A cancel request may concern one of this worker's jobs: look at the next tick."""
        self._cancel_check_requested = True

    def take_cancel_check(self, now: datetime, running: int) -> bool:
        """Whether to check for cancel requests now (only while handlers run); if so, the next
        regular check is scheduled and any pending request is used up."""
        requested, self._cancel_check_requested = self._cancel_check_requested, False
        if running == 0:
            # Nothing held to cancel. Jobs claimed from here on get their first look within an
            # interval, as one claimed just after a regular check does, rather than at the tick
            # right after their claim: one query fewer between a worker's first claims.
            self._next_cancel_check_at = now + self._cancel_check
            return False
        if now < self._next_cancel_check_at and not requested:
            return False
        self._next_cancel_check_at = now + self._cancel_check
        return True

    # --- claims ------------------------------------------------------------------------
    def request_poll(self, requested_at: datetime) -> None:
        """A job was enqueued in this process at `requested_at`: claim at the next tick."""
        with self._poll_request_lock:
            if self._poll_requested_at is None or requested_at > self._poll_requested_at:
                self._poll_requested_at = requested_at

    def take_poll_request(self, now: datetime) -> bool:
        """Whether a poll request asks this tick to claim. The request is dropped only once a
        tick whose `now` is not older than the request claims: a job enqueued just after this
        tick read the clock is not due yet at `now`, so the next tick must look again."""
        with self._poll_request_lock:
            requested_at = self._poll_requested_at
            if requested_at is not None and requested_at <= now:
                self._poll_requested_at = None
        return requested_at is not None

    def claim_soon(self) -> None:
        self._claim_wanted = True

    def claim_due(self, now: datetime) -> bool:
        """Whether a claim is due at `now`, poll requests aside."""
        earliest = self._earliest_due()
        return (
            self._claim_wanted
            or now >= self._next_poll_at
            or (earliest is not None and now >= earliest)
        )

    def claimed(self, now: datetime, *, full: bool) -> None:
        """A claim ran at `now`; `full`: it filled every free slot, so more may be waiting."""
        self._last_claim_at = now
        self._last_claim_was_full = full
        self._claim_wanted = full
        self._next_poll_at = now + self._poll
        for due_times in self._due_heaps():
            while due_times and due_times[0] <= now:
                heapq.heappop(due_times)

    def expect_retry_at(self, retry_at: datetime) -> None:
        """Look again when a retry becomes due, rather than at the next regular poll."""
        heapq.heappush(self._retries_due, retry_at)
        if self._retry_horizon is None or retry_at > self._retry_horizon:
            self._retry_horizon = retry_at

    def expect_due_at(self, due_at: datetime) -> None:
        """Look again when a job another process made pending becomes due (ADR 0062). Unlike
        a retry, it does not keep a burst worker waiting for it: burst mode drains what is due."""
        if len(self._notified_due) < MAX_NOTIFIED_DUE_TIMES:
            heapq.heappush(self._notified_due, due_at)

    def nothing_left_to_claim(self) -> bool:
        """For burst mode: the last claim found fewer jobs than slots, and it ran after every
        retry this worker scheduled became due."""
        return (
            not self._last_claim_was_full
            and self._last_claim_at is not None
            and (self._retry_horizon is None or self._last_claim_at >= self._retry_horizon)
        )

    # --- when to tick --------------------------------------------------------------------
    def due_times(self, *, running: int, can_claim: bool) -> list[datetime]:
        """When the duties a tick would perform next fall due."""
        duties = [self._next_heartbeat_at]
        if can_claim:
            duties.append(self._next_poll_at)
            earliest = self._earliest_due()
            if earliest is not None:
                duties.append(earliest)
        if running:
            duties.append(self._next_cancel_check_at)
        return duties

    def _due_heaps(self) -> tuple[list[datetime], list[datetime]]:
        return self._retries_due, self._notified_due

    def _earliest_due(self) -> datetime | None:
        """When the first retry or notified job falls due, if any is expected."""
        return min((due_times[0] for due_times in self._due_heaps() if due_times), default=None)
